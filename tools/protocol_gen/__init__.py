"""Generator of `krafka/protocol/messages/` from Kafka's JSON message schemas."""
