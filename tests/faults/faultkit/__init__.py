"""Jepsen-style fault testing of krafka on a real 3-node Apache Kafka cluster: workloads that
record what they sent, what was acknowledged and what they read (`history`), faults from a seeded
schedule (`nemesis`), and a checker comparing them (`checker`); `scenario` ties them together."""
