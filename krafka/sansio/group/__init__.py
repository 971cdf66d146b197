"""Classic consumer groups, sans-IO: the consumer protocol's metadata (`consumer_protocol`)
and the partition assignors (`assignors`)."""
