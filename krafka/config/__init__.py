"""Client configuration in Java/librdkafka spelling, one mechanism for every client.

    Producer.from_config({"bootstrap.servers": "b:9092", "linger.ms": "5",
                          "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                          "sasl.username": "u", "sasl.password": "p",
                          "ssl.ca.location": "/etc/kafka/ca.pem"})

`keywords_from_config(config, kind)` turns such a dict into the keywords of a `kind` client's
constructor: each property is looked up in the client's `OptionTable` (a shared table of the
options every client has - `client.CLIENT`: bootstrap, timeouts, reconnects, metadata,
`security.protocol`, `ssl.*`, `sasl.*` - plus the kind's own), its value converted (strings
from properties files become numbers and booleans; `.ms` values become seconds), and settings
that only mean something together are finished into keywords (`ssl.*` -> `ssl_context`,
`reconnect.backoff(.max).ms` -> `reconnect_backoff`). Unknown properties raise `ConfigError`
naming the closest valid one; properties krafka accepts without effect (`key.serializer`,
`socket.keepalive.enable`, ...) are logged.

How another client registers its options - a consumer, for example:

    # krafka/config/consumer.py
    from krafka.config.client import CLIENT
    from krafka.config.options import boolean, integer, millis, table, text

    CONSUMER = table(
        "consumer",                                  # the kind's name
        {"group.id": ("group_id", text),             # Java property -> (keyword, converter)
         "session.timeout.ms": ("session_timeout", millis),
         "enable.auto.commit": ("enable_auto_commit", boolean)},
        base=CLIENT,                                 # every client option too
        ignored={"key.deserializer": "keys are bytes"},   # accepted, no effect: why
        unsupported={...},                           # refused: why
        finishers=(...),                             # settings -> keywords, after conversion
    )

    # krafka/io/consumer.py
    @classmethod
    def from_config(cls, config, **overrides):
        return cls(**{**keywords_from_config(config, "consumer"), **overrides})

A kind named `"x"` has its table in `krafka/config/x.py` (imported on first use), or pass the
table itself: `keywords_from_config(config, CONSUMER)`. Keywords the table produces must be
the constructor's; client options reach `KafkaClient` through the constructor's
`**client_options`.
"""

from krafka.config.options import Option, OptionTable, keywords_from_config, table

__all__ = ["Option", "OptionTable", "keywords_from_config", "table"]
