"""`krafka produce TOPIC`: one record per input line, from stdin or `--file`.

Lines are bytes (a trailing `\\r\\n` or `\\n` is dropped); `--key-separator SEP` splits each
line at its first SEP into key and value (a line without it is an error naming the line, as
Kafka's console producer does). `--header K=V` adds headers to every record. Input is read in
chunks on a worker thread, so records typed by hand are sent as each line arrives while the
producer's own tasks keep running. Deliveries are confirmed as they come back: the first
failed record stops the command with its error. Reading a file shows a progress bar (bytes
read, records/s) on a terminal; every run ends with a summary line on stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import IO, Any, Final

import anyio
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

from krafka.cli.common import add_command, key_value, properties_for, run
from krafka.cli.output import console, count_of, info
from krafka.errors import ConfigError

#: Deliveries still unconfirmed before the oldest is awaited (bounds memory, not throughput).
WINDOW: Final = 50_000
CHUNK: Final = 1 << 16


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "produce", run_produce, "send lines of input as records")
    parser.add_argument("topic", metavar="TOPIC")
    parser.add_argument("--file", type=Path, metavar="PATH", help="read this file (default stdin)")
    parser.add_argument("--key-separator", metavar="SEP", help="split each line into key SEP value")
    parser.add_argument(
        "--header", type=key_value, action="append", default=[], metavar="K=V",
        help="a header on every record (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--compression", choices=("none", "gzip", "snappy", "lz4", "zstd"), default=None,
        help="compression codec (default: the properties' compression.type, else none)",
    )  # fmt: skip
    parser.add_argument("--partition", type=int, metavar="P", help="default: by key")
    parser.add_argument("--acks", choices=("0", "1", "all"), default=None, help="default all")


class LineSplitter:
    """Bytes chunks in, complete lines out (the last partial line is kept for the next)."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = (self._rest + chunk).split(b"\n")
        self._rest = lines.pop()
        return [_strip_cr(line) for line in lines]

    def end(self) -> list[bytes]:
        rest, self._rest = self._rest, b""
        return [_strip_cr(rest)] if rest else []


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def record_of(line: bytes, separator: bytes | None, number: int) -> tuple[bytes | None, bytes]:
    """(key, value) of one input line."""
    if separator is None:
        return None, line
    key, sep, value = line.partition(separator)
    if not sep:
        raise ValueError(f"line {number} has no key separator {separator.decode()!r}")
    return key, value


async def read_lines(
    stream: IO[bytes], on_bytes: Callable[[int], None]
) -> AsyncIterator[list[bytes]]:
    """Lines of `stream` in batches, each chunk read on a worker thread."""
    splitter = LineSplitter()
    read1 = getattr(stream, "read1", stream.read)
    while True:
        chunk = await anyio.to_thread.run_sync(read1, CHUNK)
        if not chunk:
            break
        on_bytes(len(chunk))
        lines = splitter.feed(chunk)
        if lines:
            yield lines
    last = splitter.end()
    if last:
        yield last


def _producer_overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if args.compression is not None:
        overrides["compression"] = args.compression
    if args.acks is not None:
        overrides["acks"] = "all" if args.acks == "all" else int(args.acks)
    return overrides


def run_produce(args: argparse.Namespace) -> int:
    from krafka.io.producer import Producer

    separator = None if args.key_separator is None else args.key_separator.encode()
    if separator == b"":
        raise ConfigError("--key-separator must not be empty")
    headers: Sequence[tuple[str, bytes | None]] = [(k, v.encode()) for k, v in args.header]
    config = properties_for("producer", args)

    async def main() -> int:
        stream: IO[bytes] = open(args.file, "rb") if args.file else sys.stdin.buffer  # noqa: SIM115
        size = args.file.stat().st_size if args.file else None
        progress = _progress(size)
        started = time.monotonic()
        count = 0
        try:
            async with Producer.from_config(config, **_producer_overrides(args)) as producer:
                pending: deque[Any] = deque()
                with progress:
                    task = progress.add_task("produce", total=size, records=0)

                    def advance(n: int) -> None:
                        progress.update(task, advance=n)

                    async for lines in read_lines(stream, advance):
                        for line in lines:
                            count += 1
                            key, value = record_of(line, separator, count)
                            pending.append(
                                await producer.send(
                                    args.topic,
                                    value,
                                    key,
                                    headers=headers or None,
                                    partition=args.partition,
                                )
                            )
                            while len(pending) > WINDOW or (pending and pending[0].done):
                                await pending.popleft()
                        progress.update(task, records=count)
                    await producer.flush()
                    while pending:
                        await pending.popleft()
        finally:
            if args.file:
                stream.close()
        elapsed = max(time.monotonic() - started, 1e-9)
        info(
            f"Produced {count_of(count, 'record')} to {args.topic} "
            f"({count / elapsed:,.0f} records/s)."
        )
        return 0

    return run(main)


class _RecordRate(TextColumn):
    """`N records, R records/s` from the task's `records` field."""

    def __init__(self) -> None:
        super().__init__("")

    def render(self, task: Any) -> Any:
        records = int(task.fields.get("records", 0))
        elapsed = task.elapsed or 0.0
        rate = records / elapsed if elapsed > 0 else 0.0
        self.text_format = f"{records:,} records  {rate:,.0f} records/s"
        return super().render(task)


def _progress(size: int | None) -> Progress:
    """A progress bar for a file read on a terminal; otherwise one that shows nothing."""
    err = console(stderr=True)
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        DownloadColumn(),
        _RecordRate(),
        TimeElapsedColumn(),
        console=err,
        disable=size is None or not err.is_terminal,
        transient=False,
    )
