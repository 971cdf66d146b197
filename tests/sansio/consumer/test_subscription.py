"""SubscriptionState: which positions count as consumed (are committed)."""

from __future__ import annotations

from krafka.sansio.consumer.subscription import ResetStrategy, SubscriptionState
from krafka.structs import OffsetAndMetadata, TopicPartition

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))


def test_only_positions_the_application_polled_or_sought_are_consumed() -> None:
    """A position resolved in the background (committed offset, reset policy) is committed
    only after the application polled it, as Java's allConsumed: a consumer that assigns,
    commits an offset of its own and closes must not auto-commit a position it never read."""
    subscription = SubscriptionState(ResetStrategy.LATEST)
    subscription.assign_from_user([T0, T1, T2])
    subscription.resolve_initializing({T0: 5, T1: None, T2: None})
    subscription.resolve(T1, 20, 0)
    subscription.seek(T2, 3)
    assert subscription.position(T0) == 5 and subscription.position(T1) == 20
    assert subscription.all_consumed() == {T2: OffsetAndMetadata(3)}
    subscription.mark_polled([T0])
    assert set(subscription.all_consumed()) == {T0, T2}
    subscription.mark_polled()
    assert subscription.all_consumed()[T1] == OffsetAndMetadata(20, "", 0)
    subscription.request_offset_reset(T1)
    subscription.resolve(T1, 30)
    assert T1 not in subscription.all_consumed()
