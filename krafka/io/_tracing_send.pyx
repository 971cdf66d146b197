# cython: language_level=3, binding=True
"""The compiled `send` of a traced producer in the default mode: `krafka.io.tracing_send`'s
`pure_context_send` compiled: a Cython coroutine (a `collections.abc.Coroutine`, as `send`'s
contract says) whose closure is a C struct."""



def context_send(object producer, object tracing):
    """`producer`'s `send` with tracing on (default mode)."""
    cdef object current = tracing.current_context
    cdef object empty = tracing.empty_context
    cdef object append_open = producer._append_open
    cdef object engine = producer._engine
    cdef object send_checked = producer._send_checked
    cdef object attend = producer._attend
    cdef object carrying = producer._carrying_send

    async def send(topic, value=None, key=None, *, headers=None, partition=None, timestamp=None):
        context = current()
        if context is not empty or headers or timestamp is not None or not producer.direct:
            return await carrying(context, topic, value, key, headers, partition, timestamp)
        try:
            handle = append_open(topic, partition, None, key, value)
        except (TypeError, ValueError):
            return await carrying(context, topic, value, key, headers, partition, timestamp)
        if handle is None or type(handle) is int:
            chosen = partition if handle is None else handle
            return await send_checked(topic, value, key, None, chosen, None)
        if engine.due:
            await attend()
        return handle

    return send
