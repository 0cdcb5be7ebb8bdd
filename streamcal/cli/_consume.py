"""``streamcal consume``: run :class:`streamcal.consumer.Consumer` on a Redis server until
SIGTERM or Ctrl-C."""

from __future__ import annotations

import sys

from streamcal.cli._common import EXIT_FAILED, EXIT_OK, UsageError


def _consume(args) -> int:
    import signal
    import threading

    from streamcal.cli._replay import _specs

    prog = args.subparser.prog

    from streamcal import registry

    specs = list(_specs(args.calibrators or ["isotonic"], "calibrator",
                        registry.make_calibrator, "--calibrator"))
    fields = {name: getattr(args, f"{name}_field") for name in ("id", "score", "label", "p")}
    shard = (0, 1)
    if args.shard is not None:
        i, _, n = args.shard.partition("/")
        if not (i.isdigit() and n.isdigit() and int(i) < int(n)):
            raise UsageError("--shard", f"must be I/N with 0 <= I < N. Got {args.shard!r} instead.")
        shard = (int(i), int(n))
        if shard[1] > 1 and args.key is None:
            raise UsageError("--shard", "several shards split the keys: give --key.")
    if args.max_keys is not None and args.key is None:
        raise UsageError("--max-keys", "it bounds the keys' calibrators: give --key.")
    try:
        from streamcal.consumer import Consumer, connect

        client = connect(args.redis)
    except ImportError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    consumer = Consumer(
        client, events=args.events, labels=args.labels, out=args.out,
        group=args.group, consumer=args.consumer, key=args.key, calibrators=specs,
        monitor=args.monitor, checkpoint_every=args.checkpoint_every, fields=fields,
        shard=shard, batch_size=args.batch_size, label_timeout_ms=args.label_timeout_ms,
        max_pending=args.max_pending,
        max_keys=args.max_keys,
    )
    stop = threading.Event()

    def handle(signum, frame):
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    print(f"{prog}: {consumer!r}: running (SIGTERM or Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        consumer.run(stop_event=stop)
    except Exception as exc:  # a lost connection, a state of other options or unreadable
        print(f"{prog}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(
        f"{prog}: stopped after {consumer.n_applied} messages "
        f"({consumer.n_dead} dead-lettered to {consumer.dead_letter_stream!r})",
        file=sys.stderr,
    )
    return EXIT_OK
