"""Committing offsets to a group and fetching them back (OffsetCommit, OffsetFetch).

* `client.OffsetClient` — commits and fetches in call order with Java's retries, a part of a
  group machine; `CommitPolicy` says who commits (`StandaloneCommits`: generation -1);
* `standalone.StandaloneOffsets` — a whole machine for a consumer that assigns its partitions
  itself but names a group;
* `wire` — the requests and Java's reading of their answers.
"""

from krafka.sansio.group.offsets.client import CommitPolicy, OffsetClient, StandaloneCommits
from krafka.sansio.group.offsets.standalone import StandaloneOffsets

__all__ = ["CommitPolicy", "OffsetClient", "StandaloneCommits", "StandaloneOffsets"]
