"""Spark: replay, fit and calibrate per key on a cluster (extra ``spark``).

A log of billions of events over millions of keys (tenants, segments, model versions)
does not fit one process; Spark partitions it by key and runs streamcal's own code on
each key's events in a Python worker:

- :func:`replay_by_key`: :func:`streamcal.replay` on each key's events
  (``groupBy(key).applyInPandas``), one row of metrics per key and calibrator, and on
  request each key's final calibrator state as a JSON snapshot;
- :func:`fit_by_key`: each key's fitted calibrator, as a JSON snapshot; with
  ``split_large_keys``, a key's events are learnt in several tasks and the partial
  calibrators merged (for the calibrators whose state merges exactly);
- :func:`calibrate_stream`: Structured Streaming with ``transformWithStateInPandas``:
  each key's calibrator lives in Spark's keyed state store, scores are calibrated as they
  arrive, labels arriving later are joined by event id and learnt, monitor alarms are
  output rows; a query restarted from its checkpoint continues exactly.

Importing this module imports neither pyspark nor pandas; each function imports them
when called, and raises an ImportError naming the extra (``pip install
"streamcal[spark]"``: pyspark >= 4.0, pyarrow, pandas) when they are missing. Functions
shipped to the workers are module-level functions of this module and closures over
them, so the workers need streamcal installed, as the driver does.

**Order of a key's events.** Spark keeps no row order through a shuffle, so the order
is made explicit before it: every row is numbered by ``monotonically_increasing_id()``
(the order of the input DataFrame: partition by partition, row by row within a
partition), and a key's events are replayed in order of ``time`` (when given), ties
(and every event, without ``time``) broken by that number, so that a DataFrame read
from a file or built from a local list replays in the order of its rows.
"""

from __future__ import annotations

import json

from streamcal import _validation as V

__all__ = ["SPARK_EXTRA", "calibrate_stream", "fit_by_key", "merge_tree", "replay_by_key"]

#: what to install for this module
SPARK_EXTRA = 'pip install "streamcal[spark]"'

# the column numbering the input rows (dropped from every output)
_ORDER = "_streamcal_order"
_CHUNK = "_streamcal_chunk"


def _import_spark():
    """pyspark's ``functions`` and ``types`` modules, or an ImportError naming the
    extra."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        from pyspark.sql import functions, types
    except ImportError as exc:
        raise ImportError(
            f"streamcal.spark needs pyspark >= 4.0, pyarrow and pandas: {SPARK_EXTRA}. "
            f"({exc})"
        ) from exc
    return functions, types


def _keys(key, owner: str) -> list:
    """``key`` as a list of column names (one name or a list/tuple of names)."""
    names = [key] if isinstance(key, str) else key
    V.check_param(
        owner,
        "key",
        key,
        isinstance(names, (list, tuple))
        and len(names) > 0
        and all(isinstance(k, str) and k for k in names),
        "a column name or a non-empty list of column names",
    )
    return list(names)


def _check_columns(df, owner: str, **columns) -> None:
    """Each given column (name -> column or None) must be a column of ``df``."""
    present = set(df.columns)
    for name, value in columns.items():
        if value is None:
            continue
        for col in [value] if isinstance(value, str) else value:
            V.check_param(
                owner, name, col, col in present,
                f"a column of the DataFrame, among {sorted(present)}",
            )


def _ordered(df, time):
    """``df`` with its rows numbered (``_ORDER``), and the sort columns of a key's
    events: ``[time, _ORDER]`` or ``[_ORDER]``."""
    functions, _ = _import_spark()
    df = df.withColumn(_ORDER, functions.monotonically_increasing_id())
    return df, ([time, _ORDER] if time is not None else [_ORDER])


def _sorted_events(pdf, sort):
    """A key's events (a pandas DataFrame) in replay order: by ``sort``, stably."""
    return pdf.sort_values(sort, kind="stable").reset_index(drop=True)


def _key_fields(df, keys):
    return [df.schema[k] for k in keys]


def _plain(value):
    """A key value as a plain Python object (numpy scalars, as pandas hands them over,
    print as ``np.int64(3)``)."""
    return value.item() if hasattr(value, "item") and callable(value.item) else value


def _key_text(keys, values) -> str:
    """``tenant='t1'`` or ``tenant='t1', version=2``: a key, for an error message."""
    return ", ".join(f"{k}={_plain(v)!r}" for k, v in zip(keys, values))


def _order_text(sort, verb: str, whose: str = "the key's events") -> str:
    """How a key's events are numbered in an error message (see the module's notes)."""
    by = (f"by {sort[0]!r}, ties in the order of the DataFrame's rows" if len(sort) > 1
          else "in the order of the DataFrame's rows")
    return f"{whose} numbered from 0 in the order {verb}: {by}"


# ------------------------------------------------------------------------ replay_by_key


def _summary_columns(calibrators, metrics, include_raw):
    """The metric keys and calibrator names of a replay of ``calibrators`` and
    ``metrics``: a replay of one event on the driver, which also checks both arguments
    as :func:`streamcal.replay` does."""
    from streamcal.replay import replay

    result = replay(
        [{"score": 0.5, "label": 1}],
        {name: cal.clone() for name, cal in calibrators.items()},
        metrics,
        include_raw=include_raw,
        every=None,
        on_error="raise",
    )
    return [c.key for c in result.columns], list(result.summary)


def _replay_group(keys, sort, score, label, calibrators, metrics, include_raw,
                  on_error, return_state, metric_keys):
    """The function applied to each key's events by :func:`replay_by_key`."""

    def run(pdf):
        import pandas as pd

        from streamcal.replay import ReplayError, replay

        events = _sorted_events(pdf, sort)
        try:
            result = replay(
                events[[score, label]],
                {name: cal.clone() for name, cal in calibrators.items()},
                metrics,
                score=score,
                label=label,
                include_raw=include_raw,
                every=None,
                on_error=on_error,
                threads=1,  # Spark runs a task per core already
            )
        except ReplayError as exc:
            # the replay numbers the rows of this key's sorted events: say so, and name
            # the key (the row's place in df is not known here)
            at = ""
            if len(sort) > 1:
                at = f"; this one has {sort[0]}={_plain(events[sort[0]].iloc[exc.line])!r}"
            where = (f"key {_key_text(keys, [events[k].iloc[0] for k in keys])} "
                     f"({_order_text(sort, 'replayed')}{at})")
            raise ReplayError(exc.line, exc.reason, exc.source, where, exc.n_events,
                              unit="event") from None
        rows = []
        for name, values in result.summary.items():
            row = {k: events[k].iloc[0] for k in keys}
            row["calibrator"] = name
            row["n_events"] = result.n_events
            row["n_skipped"] = result.n_skipped
            for m in metric_keys:
                row[m] = float(values[m])
            if return_state:
                row["snapshot"] = (
                    None
                    if name == "raw" and include_raw
                    else json.dumps(result.calibrators[name].to_dict())
                )
            rows.append(row)
        return pd.DataFrame(rows)

    return run


def replay_by_key(
    df,
    key,
    score,
    label,
    calibrators,
    metrics=("brier", "log_loss", "ece"),
    time=None,
    return_state=False,
    *,
    include_raw=True,
    on_error="skip",
):
    """Replay each key's events through the calibrators, prequentially, on Spark.

    Runs :func:`streamcal.replay` on each key's events, in a Spark task per key
    (``df.groupBy(key).applyInPandas``): every calibrator predicts each event, the
    prediction is scored, then the calibrator learns the label. Lazy: returns a Spark
    DataFrame; nothing runs until an action.

    Parameters
    ----------
    df
        A Spark DataFrame of events.
    key
        The key column, or a list of key columns.
    score, label
        The score column (a probability in [0, 1]) and the label column (0/1 or bool),
        as for :func:`streamcal.replay`.
    calibrators
        Dict name -> calibrator (a template: each key replays a fresh ``clone()``).
        The templates are pickled to the workers.
    metrics
        Metric short names or objects, as for :func:`streamcal.replay`.
    time
        Optional event-time column (numbers or timestamps): each key's events are
        replayed in its order, ties broken by the order of the rows in ``df``; None:
        in the order of the rows (see the module's notes).
    return_state
        Add the column ``snapshot``: each key's final calibrator state as JSON text
        (``json.dumps(calibrator.to_dict())``; :meth:`~streamcal.base.BinaryCalibrator.
        from_dict` of ``json.loads`` of it restores it), null for ``"raw"``.
    include_raw
        Also score the raw scores, as the calibrator ``"raw"``.
    on_error
        ``"skip"`` (malformed rows are skipped and counted in ``n_skipped``) or
        ``"raise"`` (the Spark job fails with a :class:`streamcal.ReplayError` naming
        the key, the row's position among the key's events in the order replayed,
        from 0, its ``time`` value when ``time`` is given, and what is wrong: "malformed
        event 1 of key tenant='t1' (...): score is NaN (column 'score')"; the row's
        place in ``df`` is not known to the task), as for :func:`streamcal.replay`.

    Returns
    -------
    pyspark.sql.DataFrame
        One row per key and calibrator: the key columns, ``calibrator`` (its name,
        ``"raw"`` first), ``n_events``, ``n_skipped``, one double column per key of
        :attr:`streamcal.replay.ReplayResult.summary` (``"brier"``, ``"corp.mcb"``,
        ...; names with a dot need backticks in Spark SQL), and ``snapshot`` when asked.

    Notes
    -----
    Each key's events must fit in one worker's memory (the whole group is handed to
    pandas). A key too large for one task cannot be split for this prequential replay:
    each prediction depends on the calibrator state after *all* the key's earlier
    events, so the scan is sequential by nature; only the final fit is exact in parts
    (:func:`fit_by_key` with ``split_large_keys``). Cost: one shuffle of the events by
    key, then O(n log n) per key for the sort and the replay's own cost.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> from streamcal.spark import replay_by_key
    >>> out = replay_by_key(events, "tenant", "score", "label",   # doctest: +SKIP
    ...                     {"isotonic": OnlineIsotonic()}, time="ts")
    >>> out.where("calibrator = 'isotonic'").select("tenant", "brier").show()  # doctest: +SKIP
    """
    functions, types = _import_spark()
    keys = _keys(key, "replay_by_key")
    _check_columns(df, "replay_by_key", key=keys, score=score, label=label, time=time)
    V.check_param(
        "replay_by_key", "return_state", return_state, isinstance(return_state, bool),
        "a bool",
    )
    metric_keys, _ = _summary_columns(calibrators, metrics, include_raw)
    V.check_choice(on_error, "replay_by_key", "on_error", ("skip", "raise"))
    df, sort = _ordered(df, time)
    fields = _key_fields(df, keys) + [
        types.StructField("calibrator", types.StringType(), False),
        types.StructField("n_events", types.LongType(), False),
        types.StructField("n_skipped", types.LongType(), False),
    ]
    fields += [types.StructField(m, types.DoubleType(), True) for m in metric_keys]
    if return_state:
        fields.append(types.StructField("snapshot", types.StringType(), True))
    columns = keys + [score, label] + ([time] if time is not None else []) + [_ORDER]
    columns = list(dict.fromkeys(columns))
    return (
        df.select(*columns)
        .groupBy(*keys)
        .applyInPandas(
            _replay_group(keys, sort, score, label, calibrators, metrics, include_raw,
                          on_error, return_state, metric_keys),
            schema=types.StructType(fields),
        )
    )


# --------------------------------------------------------------------------- fit_by_key


def _fit_group(keys, sort, score, label, calibrator, extra=()):
    """The function fitting each key's (or each chunk's) events for :func:`fit_by_key`."""

    def run(pdf):
        import pandas as pd

        events = _sorted_events(pdf, sort)
        cal = calibrator.clone()
        try:
            cal.learn_many(events[score].to_numpy(float), events[label].to_numpy())
        except ValueError as exc:  # the calibrator's, naming an index: say of what
            whose = (f"the events of its chunk {_plain(events[_CHUNK].iloc[0])} "
                     "(split_large_keys)" if _CHUNK in extra else "the key's events")
            raise ValueError(
                f"fit_by_key: key {_key_text(keys, [events[k].iloc[0] for k in keys])} "
                f"({_order_text(sort, 'learnt', whose)}): {exc}"
            ) from None
        row = {k: events[k].iloc[0] for k in list(keys) + list(extra)}
        row["snapshot"] = json.dumps(cal.to_dict())
        return pd.DataFrame([row])

    return run


def merge_tree(objects):
    """Merge a non-empty list of mergeable objects pairwise, as a balanced binary tree
    (depth ``ceil(log2 n)``): ``[a, b, c, d]`` becomes ``(a + b) + (c + d)``.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> from streamcal.spark import merge_tree
    >>> parts = [OnlineIsotonic() for _ in range(3)]
    >>> for i, part in enumerate(parts):
    ...     part.learn_many([0.2 + 0.3 * i, 0.3 + 0.3 * i], [i % 2, 1])
    >>> merge_tree(parts).n_events
    6
    """
    objects = list(objects)
    while len(objects) > 1:
        pairs = [objects[i:i + 2] for i in range(0, len(objects), 2)]
        objects = [p[0].merge(p[1]) if len(p) == 2 else p[0] for p in pairs]
    return objects[0]


def _merge_group(keys, calibrator):
    """The function merging the partial snapshots of one key (:func:`fit_by_key`)."""

    def run(pdf):
        import pandas as pd

        pdf = pdf.sort_values(_CHUNK, kind="stable")
        cls = type(calibrator)
        parts = [cls.from_dict(json.loads(s)) for s in pdf["snapshot"]]
        row = {k: pdf[k].iloc[0] for k in keys}
        row["snapshot"] = json.dumps(merge_tree(parts).to_dict())
        return pd.DataFrame([row])

    return run


def fit_by_key(df, key, score, label, calibrator, time=None, *, split_large_keys=None):
    """Fit one calibrator per key on Spark; return each key's state as JSON.

    Parameters
    ----------
    df
        A Spark DataFrame of events.
    key
        The key column, or a list of key columns.
    score, label
        The score and label columns.
    calibrator
        The template (each key learns a fresh ``clone()``; pickled to the workers).
    time
        Optional event-time column: each key's events are learnt in its order, ties
        broken by the order of the rows in ``df`` (see the module's notes).
    split_large_keys
        None (each key is learnt in one task), or an int N >= 1: a key with more than
        N events is learnt in ``ceil(count / N)`` tasks (its events dealt to them by a
        hash of their row number), and the partial calibrators are merged
        (:meth:`~streamcal.base.BinaryCalibrator.merge`, pairwise, a balanced tree:
        :func:`merge_tree`). This costs one more pass (counting events per key) and one
        more shuffle (of the snapshots). Only for calibrators whose state is a sum of
        per-event statistics (order-free: ``OnlineIsotonic``, ``VennAbers``,
        ``HistogramBinning("uniform")``, ... without a window or a half-life, which
        would need one event order across the tasks): any other raises a TypeError
        saying why. The merged state equals the unsplit one (counts exactly; float sums
        up to the order of the additions).

    Raises
    ------
    ValueError
        In the Spark job, when a key's events hold an invalid score or label (null, NaN,
        outside [0, 1], a label other than 0/1): the calibrator's message, naming the
        index of the event among the key's events in the order learnt, from 0 (with
        ``split_large_keys``, among the events of one chunk of the key), preceded by
        the key.

    Returns
    -------
    pyspark.sql.DataFrame
        The key columns and ``snapshot``: ``json.dumps(calibrator.to_dict())`` of the
        key's fitted calibrator (``type(calibrator).from_dict(json.loads(s))``
        restores it).

    Notes
    -----
    Without ``split_large_keys``, each key's events must fit in one worker's memory;
    with it, each chunk (about N events) must, and the merge holds every partial
    calibrator of one key at once (its state: for ``OnlineIsotonic``, O(distinct
    scores), bounded by a ``resolution`` grid).

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> from streamcal.spark import fit_by_key
    >>> fitted = fit_by_key(events, "tenant", "score", "label",   # doctest: +SKIP
    ...                     OnlineIsotonic(resolution=1e-3), split_large_keys=1_000_000)
    """
    functions, types = _import_spark()
    keys = _keys(key, "fit_by_key")
    _check_columns(df, "fit_by_key", key=keys, score=score, label=label, time=time)
    V.check_param(
        "fit_by_key", "calibrator", calibrator,
        callable(getattr(calibrator, "learn_many", None))
        and callable(getattr(calibrator, "to_dict", None)),
        "a calibrator (with learn_many and to_dict)",
    )
    V.check_int(split_large_keys, "fit_by_key", "split_large_keys", minimum=1,
                allow_none=True)
    df, sort = _ordered(df, time)
    columns = list(dict.fromkeys(keys + [score, label] + ([time] if time else []) + [_ORDER]))
    df = df.select(*columns)
    schema = types.StructType(
        _key_fields(df, keys) + [types.StructField("snapshot", types.StringType(), False)]
    )
    if split_large_keys is None:
        return df.groupBy(*keys).applyInPandas(
            _fit_group(keys, sort, score, label, calibrator), schema=schema
        )
    try:
        calibrator.clone().merge(calibrator.clone())
    except TypeError as exc:
        raise TypeError(
            "The 'split_large_keys' argument of fit_by_key needs a calibrator whose "
            f"state merges exactly. {exc}"
        ) from None
    counts = df.groupBy(*keys).count()
    n_chunks = functions.ceil(functions.col("count") / functions.lit(split_large_keys))
    chunked = df.join(counts, on=keys).withColumn(
        _CHUNK, functions.pmod(functions.xxhash64(_ORDER), n_chunks.cast("long"))
    ).drop("count")
    partial_schema = types.StructType(
        _key_fields(df, keys)
        + [types.StructField(_CHUNK, types.LongType(), False),
           types.StructField("snapshot", types.StringType(), False)]
    )
    partial = chunked.groupBy(*keys, _CHUNK).applyInPandas(
        _fit_group(keys, sort, score, label, calibrator, extra=(_CHUNK,)),
        schema=partial_schema,
    )
    return partial.groupBy(*keys).applyInPandas(
        _merge_group(keys, calibrator), schema=schema
    )


# ---------------------------------------------------------------------- calibrate_stream


def _stream_output_fields(types, key_fields):
    return key_fields + [
        types.StructField("kind", types.StringType(), False),
        types.StructField("id", types.StringType(), False),
        types.StructField("score", types.DoubleType(), True),
        types.StructField("p", types.DoubleType(), True),
        types.StructField("label", types.LongType(), True),
        types.StructField("e_value", types.DoubleType(), True),
    ]


def _snapshot_text(obj) -> str:
    return json.dumps(obj.to_dict())


def _stream_processor_class():
    """The stateful processor of :func:`calibrate_stream` (a class deriving from
    pyspark's ``StatefulProcessor``, built on first use so that importing this module
    does not import pyspark)."""
    global _StreamProcessor
    if _StreamProcessor is not None:
        return _StreamProcessor
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class StreamCalibrationProcessor(StatefulProcessor):
        """Per key: the calibrator's snapshot (a value state), the scores waiting for
        their labels (a map state id -> (score, p)), the labels that came before their
        scores (a map state id -> label), and the monitor's snapshot."""

        def __init__(self, keys, calibrator, monitor, order, columns, names):
            self.keys = keys
            self.columns = columns
            self.names = names  # the user's score and label columns, for the errors
            self.calibrator = calibrator
            self.monitor = monitor
            self.order = order

        def init(self, handle):
            self.state = handle.getValueState(
                "calibrator", "snapshot string"
            )
            self.monitor_state = handle.getValueState("monitor", "snapshot string")
            self.pending = handle.getMapState(
                "pending", "id string", "score double, p double"
            )
            self.early = handle.getMapState("early", "id string", "label long")

        def _load(self, state, template):
            if state.exists():
                return type(template).from_dict(json.loads(state.get()[0]))
            return template.clone()

        def handleInputRows(self, key, rows, timerValues):
            import pandas as pd

            events = pd.concat(list(rows), ignore_index=True)
            # the value columns reach the worker named by position (_1, _2, ...): name
            # them again, in the order calibrate_stream selected them
            events.columns = list(self.keys) + self.columns
            events = events.sort_values(self.order, kind="stable")
            cal = self._load(self.state, self.calibrator)
            monitor = None if self.monitor is None else self._load(
                self.monitor_state, self.monitor
            )
            out = []
            base = dict(zip(self.keys, key))
            learnt = False

            def learn(event_id, s, p, y):
                nonlocal learnt
                cal.learn_one(s, y)
                learnt = True
                if monitor is not None:
                    monitor.update(p, y)
                    if monitor.drift_detected:
                        out.append({**base, "kind": "alarm", "id": event_id,
                                    "score": s, "p": p, "label": int(y),
                                    "e_value": getattr(monitor, "e_value", None)})

            def invalid(event_id, what, domain, value):
                return ValueError(
                    f"calibrate_stream: the {self.names[what]!r} column of the event "
                    f"{event_id!r} of key {_key_text(self.keys, key)} must be {domain}. "
                    f"Got {V.format_value(value)} instead."
                )

            # has a score / a label: not null in Spark (pandas shows a null as NaN, so
            # a NaN score or label is told from a missing one by these flags)
            # a value that is not null but no number ("n/a" in a text column) comes as
            # its text in the *_unread column
            for event_id, s, s_text, y, y_text, has_score, has_label in zip(
                events["_id"].tolist(), events["_score"].tolist(),
                events["_score_unread"].tolist(), events["_label"].tolist(),
                events["_label_unread"].tolist(), events["_kind"].tolist(),
                events["_has_label"].tolist(),
            ):
                if has_score and not 0.0 <= s <= 1.0:  # NaN too
                    raise invalid(event_id, "score", V.SCORE_DOMAIN,
                                  s if s_text is None else s_text)
                if has_label:
                    if y not in (0.0, 1.0):
                        raise invalid(event_id, "label", "a binary label in {0, 1}",
                                      y if y_text is None else y_text)
                    y = int(y)
                if has_score:
                    p = cal.predict_one(s)
                    out.append({**base, "kind": "prediction", "id": event_id,
                                "score": s, "p": p, "label": None, "e_value": None})
                    if has_label:
                        learn(event_id, s, p, int(y))
                    elif self.early.containsKey((event_id,)):
                        y0 = self.early.getValue((event_id,))[0]
                        self.early.removeKey((event_id,))
                        learn(event_id, s, p, y0)
                    else:
                        self.pending.updateValue((event_id,), (float(s), float(p)))
                elif has_label:
                    if self.pending.containsKey((event_id,)):
                        s0, p0 = self.pending.getValue((event_id,))
                        self.pending.removeKey((event_id,))
                        learn(event_id, s0, p0, int(y))
                    else:
                        self.early.updateValue((event_id,), (int(y),))
            if learnt:
                self.state.update((_snapshot_text(cal),))
                if monitor is not None:
                    self.monitor_state.update((_snapshot_text(monitor),))
            if out:
                yield pd.DataFrame(out)

        def close(self):
            pass

    # a local class: cloudpickle ships it to the workers by value (its base class and
    # this module's functions by reference)
    _StreamProcessor = StreamCalibrationProcessor
    return _StreamProcessor


_StreamProcessor = None


def calibrate_stream(
    stream_df,
    key,
    score,
    calibrator,
    *,
    event_id="id",
    label=None,
    labels_df=None,
    time=None,
    monitor=None,
):
    """Calibrate a keyed stream of scores on Structured Streaming, learning each label
    when it arrives.

    ``groupBy(key).transformWithStateInPandas`` (Spark >= 4.0) keeps, in Spark's keyed
    state store, each key's calibrator (its JSON snapshot), the scores waiting for their
    labels, the labels that came before their scores and the monitor's snapshot. Each
    score is calibrated by its key's calibrator as it arrives (an output row); each
    label, joined to its score by ``event_id``, is learnt (and fed to the monitor, whose
    alarms are output rows). The state is saved with every micro-batch in the query's
    checkpoint, so a query restarted from its checkpoint location continues exactly:
    with a replayable source and an exactly-once sink (files, Delta, Kafka with
    idempotent writes), its output is that of a query that never stopped.

    Set ``spark.sql.streaming.stateStore.providerClass`` to
    ``org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider``
    (transformWithStateInPandas requires the RocksDB state store) before starting the
    query.

    Parameters
    ----------
    stream_df
        A streaming DataFrame of score events: the key column(s), ``event_id`` and
        ``score``, and optionally ``label`` (required unless ``labels_df`` is given)
        and ``time``.
    key
        The key column, or a list of key columns.
    score
        The score column (a probability in [0, 1]). A row whose score is null carries
        only a label (of an event seen earlier, or later).
    calibrator
        The template: each key starts from a fresh ``clone()``.
    event_id
        The column joining labels to their scores (compared as text).
    label
        The label column (0/1), or None. Without ``labels_df`` it must be a column of
        ``stream_df``; with ``labels_df`` it must be a column of ``labels_df``, and
        ``stream_df`` may have it too (then used as below) or not. A row with a score
        and a label is predicted, then learnt at once; a row with a label and a null
        score is a label arriving on its own.
    labels_df
        Optional second streaming DataFrame of label events, with the key column(s),
        ``event_id``, ``label`` (and ``time`` when given); unioned with ``stream_df``.
    time
        Optional event-time column (numbers or timestamps), in both DataFrames: within
        one micro-batch a key's rows are taken in its order, a label before a score at
        the same time (a label arriving with an event counts as known to it, as in
        :func:`streamcal.replay`), ties broken by ``event_id``. None: within a
        micro-batch, labels first, then scores, each in order of ``event_id``. Across
        micro-batches, rows are taken in the order Spark reads them.
    monitor
        Optional monitor template (:class:`streamcal.monitor.CalibrationMonitor`), one
        per key, updated with ``(p, label)`` when a label is learnt: the prediction the
        calibrator made for that event.

    Returns
    -------
    pyspark.sql.DataFrame
        A streaming DataFrame (append mode) of the key columns and ``kind``
        (``"prediction"`` or ``"alarm"``), ``id``, ``score``, ``p`` (the calibrated
        probability; for an alarm, the prediction that the monitor scored), ``label``
        (alarms) and ``e_value`` (alarms, when the monitor has one).

    Raises
    ------
    ValueError
        In the query (which stops, the micro-batch uncommitted), on an invalid value:
        a score that is not null and not in [0, 1] (NaN included), or a label that is
        not null and not 0 or 1 (0.5 included: labels are not rounded), text that is
        no number ("n/a") included; the message names the column, the event id, the
        key and the value. Only a null score or
        label means "none"; filter the input first to drop invalid rows instead.

    Notes
    -----
    A label whose score never comes stays in the state (no timer expires it). The
    cost per event is one ``predict_one`` (a score) or one ``learn_one`` (a label) and
    a state lookup; per key and micro-batch, one snapshot read and, when something was
    learnt, one written: O(the calibrator's state), so calibrators with bounded state
    (a ``resolution`` grid, bins, a window) suit long streams.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic
    >>> from streamcal.spark import calibrate_stream
    >>> out = calibrate_stream(events, "tenant", "score",   # doctest: +SKIP
    ...                        OnlineIsotonic(resolution=1e-3), label="label")
    >>> query = (out.writeStream.format("parquet")   # doctest: +SKIP
    ...          .option("checkpointLocation", "ckpt").start("out"))
    """
    functions, types = _import_spark()
    keys = _keys(key, "calibrate_stream")
    # with labels_df, the labels come from there: the score stream may have a label
    # column (used when it has one) or not
    _check_columns(stream_df, "calibrate_stream", key=keys, score=score,
                   event_id=event_id, label=label if labels_df is None else None,
                   time=time)
    if labels_df is not None:
        _check_columns(labels_df, "calibrate_stream", key=keys, event_id=event_id,
                       time=time)
        V.check_param("calibrate_stream", "label", label, label is not None
                      and label in labels_df.columns,
                      f"a column of labels_df, among {sorted(labels_df.columns)}")
    V.check_param(
        "calibrate_stream", "calibrator", calibrator,
        callable(getattr(calibrator, "predict_one", None))
        and callable(getattr(calibrator, "to_dict", None)),
        "a calibrator (with predict_one, learn_one and to_dict)",
    )

    def as_double(df, name, alias):
        """The column ``name`` cast to a double (a label 0.5 or NaN is refused, not
        truncated to 0), whether it is not null, and, where the cast loses a value
        that is not null ("n/a" in a text column), that value as text: the processor
        refuses it, naming the event (Spark's ANSI cast would stop the query without
        naming it; a lenient cast would take the value for a missing one)."""
        if name is None or name not in df.columns:
            none = functions.lit(None)
            return [none.cast("double").alias(alias), functions.lit(False).alias(f"{alias}_given"),
                    none.cast("string").alias(f"{alias}_unread")]
        given = functions.col(name)
        value = given.try_cast("double")  # null, not an error (ANSI mode), if no number
        return [value.alias(alias), given.isNotNull().alias(f"{alias}_given"),
                functions.when(given.isNotNull() & value.isNull(), given.cast("string"))
                .alias(f"{alias}_unread")]

    def columns(df, has_score):
        cols = [functions.col(k) for k in keys]
        cols.append(functions.col(event_id).cast("string").alias("_id"))
        cols += as_double(df, score if has_score else None, "_score")
        cols += as_double(df, label, "_label")
        if time is not None:
            cols.append(functions.col(time).alias("_time"))
        # labels first at equal times: 0 for a row with no score (null; a NaN score is
        # a score, refused by the processor)
        return df.select(*cols).withColumn(
            "_kind", functions.when(functions.col("_score_given"), 1).otherwise(0)
        ).withColumnRenamed("_label_given", "_has_label").drop("_score_given")

    events = columns(stream_df, True)
    if labels_df is not None:
        events = events.unionByName(columns(labels_df, False))
    order = (["_time"] if time is not None else []) + ["_kind", "_id"]
    value_columns = (["_id", "_score", "_score_unread", "_label", "_label_unread"]
                     + (["_time"] if time else []) + ["_kind", "_has_label"])
    events = events.select(*keys, *value_columns)  # the processor names them by position
    processor = _stream_processor_class()(keys, calibrator, monitor, order, value_columns,
                                          {"score": score, "label": label})
    schema = types.StructType(_stream_output_fields(types, _key_fields(stream_df, keys)))
    return events.groupBy(*keys).transformWithStateInPandas(
        statefulProcessor=processor,
        outputStructType=schema,
        outputMode="Append",
        timeMode="None",
    )
