"""The public entry of the replay: :func:`replay` checks nothing itself, builds the
columnar engine (:class:`streamcal.replay._engine.ColumnarReplay`) and runs it."""

from __future__ import annotations

from streamcal.replay._engine import ColumnarReplay

__all__ = ["replay"]


def replay(
    events,
    calibrators,
    metrics=("brier", "log_loss", "ece"),
    *,
    score="score",
    label="label",
    time=None,
    label_time=None,
    id=None,
    labels=None,
    include_raw=True,
    every=1000,
    window=None,
    checkpoint=None,
    checkpoint_every=10000,
    checkpoint_share=None,
    resume=False,
    on_error="skip",
    progress=None,
    keep_forecasts=False,
    max_errors=1000,
    stop=None,
    format=None,
    delimiter=None,
    threads=None,
) -> ReplayResult:
    """Replay a log of scores and labels through calibrators, prequentially.

    For each event, in the order of the log, every calibrator predicts from the score
    (using only the labels known at that moment), the prediction is scored by each
    metric once the label is known, and then the calibrator learns the label. The raw
    scores are scored too, as the calibrator ``"raw"``.

    Parameters
    ----------
    events
        The log: an iterable of dict records, a pandas DataFrame, or the path of a
        ``.csv`` / ``.tsv`` / ``.jsonl`` / ``.ndjson`` file (each may be gzipped,
        ``.gz``) or of a ``.parquet`` file (needs pyarrow: ``pip install
        "streamcal[fast]"``), or ``"-"`` for standard input (CSV unless ``format``
        says otherwise). pandas and pyarrow are imported only for those inputs. CSV
        header names are stripped of surrounding whitespace; a column used must be
        named once in the header. JSON Lines files and records have no header: their
        columns are the keys found in the first 1,000 rows, so a column in none of them
        is refused (ValueError, a usage error of the command), and a row lacking a
        column that others have is a malformed row. A row that cannot be read (a CSV
        field longer than the CSV reader's limit, a line that is not valid UTF-8,
        invalid or too deeply nested JSON) is a malformed row, reported with its line.
    calibrators
        Dict name -> calibrator. Each is used as given and learns in place. For a
        binary log, :class:`streamcal.base.BinaryCalibrator` objects (or anything with
        ``predict_one(score) -> float`` and ``learn_one(score, label)``); for a
        multiclass log, objects with ``predict_one(dict) -> dict`` and
        ``learn_one(dict, label)`` (:class:`streamcal.base.MulticlassCalibrator`; an
        empty dict scores the raw forecasts alone). To checkpoint, each needs
        ``to_dict()`` and a class method ``from_dict``.
    metrics
        Metric short names, :class:`streamcal.metrics.base.StreamingMetric` objects
        (cloned, unfitted, per calibrator; keyed by their short name plus the parameters
        that differ from the defaults, e.g. ``"ece:n_bins=15"``), or a dict key ->
        short name or metric. Binary short names: ``"brier"``, ``"log_loss"``,
        ``"ece"``, ``"sharpness"``, ``"roc_auc"``, ``"calibration_refinement"``,
        ``"murphy"``, ``"corp"``. Multiclass short names: ``"brier"``
        (:class:`streamcal.metrics.MulticlassBrier`, ``sum_c (p_c - [y = c])**2``, in
        [0, 2]), ``"log_loss"`` (:class:`streamcal.metrics.CrossEntropy`, ``-log p_y``,
        clipped at 1e-15), ``"ece"`` (= ``"confidence_ece"``,
        :class:`streamcal.metrics.ConfidenceECE`), ``"top_label_ece"``,
        ``"classwise_ece"`` and ``"tece"``.
    score
        Binary log: the score column, a probability in [0, 1]. Multiclass log: a list
        (or tuple) of columns, one per class, each holding that class's probability;
        the class is named by its column, or give a dict class -> column. A row's
        probabilities must sum to 1 within 0.01 and are divided by their sum when it is
        off by more than 1e-9 (logs round their numbers).
    label
        The label column. Binary: 0, 1, True, False, 0.0, 1.0 or their text forms
        (``"0"``, ``"1"``, ``"0.0"``, ``"1.0"``, ``"true"``, ``"false"``, ...).
        Multiclass: a class (its column name, or its text form). Text labels are
        read without surrounding whitespace (``" 1"`` is 1).
    time
        Optional event-time column: numbers, or ISO 8601 text / datetimes (read as UTC
        when they have no zone). Kept in ``series["time"]``; needed for delayed labels,
        which also require the events to be in time order (an event earlier than the
        previous one is malformed).
    label_time
        Delayed labels, way 1: the column giving when each event's label becomes known
        (same form as ``time``).
    id, labels
        Delayed labels, way 2: ``labels`` is a second log (records, DataFrame or path)
        of label records with columns ``id``, ``label`` and ``time`` (when the label
        became known), in time order; ``id`` names the column joining them to the
        events (whose ``label`` column is then not read). A label record whose id
        matches no event waiting for its label is malformed. Ids are compared as text
        whatever the file format: text without surrounding whitespace, integral
        numbers as their integer text, and text that is a decimal number with an
        integral value written as a float is (``"17.0"``, ``"17.00"``, ``"-3.0"``)
        as that integer text too (``17``, ``17.0``, ``"17"`` and ``"17.0"`` match);
        other text as it is (``"017"``, ``"1e1"`` and ``"1.50"`` match neither
        ``17``, ``10`` nor ``1.5``), other finite floats by their ``repr``; bools and
        other values are malformed.
    include_raw
        Also score the raw scores, as the calibrator ``"raw"``.
    every
        Sample every metric into ``series`` every ``every`` events (and once at the
        end), and call ``progress``; None: only at the end.
    window
        If set, also follow every metric over the last ``window`` scored events (keys
        ``"<metric>@window"``). Costs O(window) memory per calibrator.
    checkpoint
        Path of a JSON file where the whole replay state (calibrators, metrics, series,
        errors, counts, pending delayed events, position in the log) is saved as
        ``checkpoint_every`` and ``checkpoint_share`` say, at the end of the log or at
        a ``stop`` (before the labels still pending are revealed), and before raising
        a :class:`ReplayError`. Written
        atomically (a temporary file, synced, then ``os.replace``); each write costs
        O(state): the calibrators, metrics, series and pending events. It ends with a
        checksum (the SHA-256 of the text before it) that a resume verifies: a
        checkpoint damaged or edited after it was written is refused (ValueError);
        one without a checksum (written by an earlier version) resumes. It must be
        another file than the logs (ValueError).
    checkpoint_every
        Events between checkpoints, at least.
    checkpoint_share
        None (the default) or 1: write every ``checkpoint_every`` events, however long
        it takes. A fraction in (0, 1): spend at most about this share of the run
        writing checkpoints: after a write that took ``d`` seconds, the next one waits,
        beyond ``checkpoint_every`` events, until ``d * (1 - share) / share`` seconds
        have passed (9 ``d`` for 0.1, the command's default), so that a state growing
        with the log (exact isotonic calibrators, say) does not make the writes cost
        quadratic time; which events a checkpoint follows then depends on the
        machine's speed, and nothing else: the results are the same.
    resume
        Continue from ``checkpoint``: the rows already replayed are skipped and the
        results are exactly those of an uninterrupted replay. The log, columns,
        calibrators (their classes and parameters) and metrics must be those of the
        interrupted run (ValueError otherwise); the calibrators given are restored in
        place. A missing checkpoint file starts the replay from the beginning.
    on_error
        ``"skip"``: a malformed row (missing or non-numeric score, score outside [0, 1]
        or NaN, unknown label, bad time, duplicate id, ...) is recorded in ``errors``
        with its line number, counted in ``n_skipped``, and changes nothing.
        ``"raise"``: stop with :class:`ReplayError` naming the line and the reason;
        what was learnt stays in the calibrators (and, with ``checkpoint``, in the
        checkpoint, so that the run can resume once the row is fixed).
    progress
        Optional callable, called with the number of events replayed every ``every``
        events, and at the end with the final count (unless it was just called with
        it).
    keep_forecasts
        Keep every scored prediction in ``ReplayResult.forecasts`` (O(events) memory).
    max_errors
        How many malformed rows to keep in ``errors`` (all are counted).
    format
        How to read a file or standard input: ``"csv"``, ``"tsv"``, ``"jsonl"`` or
        ``"parquet"`` (standard input is then read into memory whole); None: from the
        file's suffix, CSV for standard input. Applies to ``events`` (the label records
        are read by their suffix).
    delimiter
        The field delimiter of a CSV ``events`` log (one character); None: a tab for
        ``.tsv`` files and ``format="tsv"``, else a comma.
    threads
        How many threads run the calibrators side by side: each run of events that is
        predicted and learnt at once is one ``predict_learn_many`` call per calibrator,
        and these calls go to a pool of this many threads (the isotonic calibrators'
        compiled loops release the GIL, so they use several cores). None: one per CPU
        available to the process, at most one per calibrator; 1: one after another.
        The results are the same either way.
    stop
        Optional callable, polled as the replay goes (at least every 8,192 events and
        between chunks of the log): once it returns True, the replay stops on an event
        boundary, before the labels still pending are revealed; the checkpoint, if any,
        is written with the state after the last event replayed (a resume goes on from
        there), and the result (``stopped`` True) holds the metrics over the events
        replayed. The command's Ctrl-C sets it.

    Returns
    -------
    ReplayResult

    Notes
    -----
    **Prequential order.** With labels known at once (no ``label_time`` / ``id``), each
    event is predicted, scored, then learnt before the next is read. With delayed
    labels, an event is predicted when it is read and kept (with its predictions: the
    memory holds the pending events only) until its label arrives; then it is scored
    and learnt. A label known at time ``L`` is revealed before any event whose time is
    ``>= L`` is predicted (a label arriving at the same moment as an event counts as
    known to it, as in river's ``stream.simulate_qa``); labels revealed at once are
    taken in order of ``L``, then of the events (way 1), or in the order of the label
    records (way 2). An event's own label is never known to its own prediction: when
    ``L`` is not later than the event's time, the label is scored and learnt right
    after the prediction, before the next event (so ``label_time`` equal to ``time``
    replays exactly as labels known at once). Way 2: a label record whose id is not
    waiting yet is kept while events of its time may still come (so a label stamped
    with its event's own time works); otherwise it is malformed. At the end of the
    log, the labels still pending are revealed in that order (way 1) or the remaining
    label records are read (way 2); events left without a label are counted in
    ``n_unlabelled``.

    **Windows** count scored events; a revertible metric is updated and reverted by
    the replay, one that cannot revert (``ECE(strategy="quantile")``) is built with
    ``window_size=window``.

    **Line numbers** in ``errors`` and :class:`ReplayError`: for CSV and JSON Lines
    files, the line in the file (the CSV header is line 1); for records, DataFrames and
    Parquet files, the 0-based index of the row. Blank CSV lines are skipped.

    **Cost.** Per event: parsing (one ``float`` and one dict lookup for a binary CSV
    row), plus one ``predict_one``, one ``learn_one`` and the metric updates per
    calibrator. Memory: the calibrators and metrics, the series (one value per metric
    every ``every`` events), the pending events, and the window; nothing per event
    unless ``keep_forecasts``. Measured by ``benchmarks/bench_replay.py``.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, replay
    >>> rows = [{"score": 0.9, "label": i % 2} for i in range(100)]  # over-confident
    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, metrics=["brier", "ece"])
    >>> {name: round(v["brier"], 4) for name, v in result.summary.items()}
    {'raw': 0.41, 'isotonic': 0.2734}
    >>> result.n_events, result.n_learnt, result.n_skipped
    (100, 100, 0)

    Labels that arrive late: the first two events' labels are known only at time 2,
    so the third event is predicted with both of them, the second with neither:

    >>> rows = [{"t": t, "lt": lt, "score": s, "label": y} for t, lt, s, y in
    ...         [(0, 2, 0.3, 1), (1, 2, 0.3, 1), (2, 3, 0.3, 0)]]
    >>> result = replay(rows, {"isotonic": OnlineIsotonic()}, ["brier"], time="t",
    ...                 label_time="lt", keep_forecasts=True)
    >>> result.forecasts["isotonic"]
    [0.3, 0.3, 1.0]

    """
    return ColumnarReplay(
        calibrators,
        metrics,
        score=score,
        label=label,
        time=time,
        label_time=label_time,
        id=id,
        labels=labels,
        include_raw=include_raw,
        every=every,
        window=window,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        checkpoint_share=checkpoint_share,
        resume=resume,
        on_error=on_error,
        progress=progress,
        keep_forecasts=keep_forecasts,
        max_errors=max_errors,
        stop=stop,
        format=format,
        delimiter=delimiter,
        threads=threads,
    ).run(events)

