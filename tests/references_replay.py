"""Slow, obviously correct oracles for streamcal.replay.

- :func:`prequential`: the hand-written test-then-train loop, event by event.
- :func:`delayed_predictions`: a brute-force simulation of delayed labels: for each event,
  a *fresh* calibrator learns exactly the labels known at that event's time (those of
  earlier events whose label time is <= its time, in order of label time then event),
  then predicts. Quadratic, and independent of any scheduling code.
- :class:`MixingCalibrator`: a tiny multiclass calibrator (predict_one / learn_one on
  dicts, to_dict / from_dict) to replay multiclass logs with.

References: river's ``stream.simulate_qa`` (a label whose time has come is revealed
before the next question; ties reveal first).
"""

from __future__ import annotations

__all__ = [
    "MixingCalibrator",
    "delayed_predictions",
    "delayed_scoring_order",
    "prequential",
]


def prequential(events, calibrators: dict, make_metrics, every=None):
    """Predict, score, learn, one event at a time.

    ``events`` is a list of ``(score, label)``; ``calibrators`` a dict name ->
    calibrator (``"raw"`` scores the score itself); ``make_metrics()`` returns a fresh
    dict key -> metric. Returns ``(predictions, metrics, samples)``: name -> list of
    predictions, name -> dict of metrics, and ``[(t, name -> key -> value)]`` every
    ``every`` events.
    """
    preds = {name: [] for name in calibrators}
    metrics = {name: make_metrics() for name in calibrators}
    samples = []
    for t, (s, y) in enumerate(events, 1):
        for name, cal in calibrators.items():
            p = s if name == "raw" else cal.predict_one(s)
            preds[name].append(p)
            for m in metrics[name].values():
                m.update(y, p)
            if name != "raw":
                cal.learn_one(s, y)
        if every and t % every == 0:
            samples.append(
                (
                    t,
                    {
                        n: {k: m.get() for k, m in ms.items()}
                        for n, ms in metrics.items()
                    },
                )
            )
    return preds, metrics, samples


def delayed_predictions(events, make_calibrator):
    """Prediction of each event by a fresh calibrator that has learnt the labels known
    at its time. ``events``: list of ``(time, label_time, score, label)``."""
    out = []
    for i, (t, _, s, _) in enumerate(events):
        known = sorted((events[j][1], j) for j in range(i) if events[j][1] <= t)
        cal = make_calibrator()
        for _, j in known:
            cal.learn_one(events[j][2], events[j][3])
        out.append(cal.predict_one(s))
    return out


def delayed_scoring_order(events):
    """The order in which the labels are scored when every label time is >= its
    event's time: by label time, then event."""
    return [j for _, j in sorted((e[1], j) for j, e in enumerate(events))]


class MixingCalibrator:
    """Multiclass: mixes the forecast with the label frequencies seen so far,
    ``(1 - a) p_c + a f_c`` with ``f_c = (n_c + 1) / (n + k)`` over the classes seen in
    forecasts and labels (``a`` grows as ``n / (n + 10)``)."""

    def __init__(self, strength=10):
        self.strength = strength
        self.counts = {}
        self.n = 0

    def predict_one(self, p: dict) -> dict:
        if not self.n:
            return dict(p)
        classes = list(p) + [c for c in self.counts if c not in p]
        a = self.n / (self.n + self.strength)
        k = len(classes)
        return {
            c: (1 - a) * p.get(c, 0.0) + a * (self.counts.get(c, 0) + 1) / (self.n + k)
            for c in classes
        }

    def learn_one(self, p: dict, y) -> None:
        self.counts[y] = self.counts.get(y, 0) + 1
        self.n += 1

    def to_dict(self) -> dict:
        return {
            "class": "MixingCalibrator",
            "params": {"strength": self.strength},
            "state": {"counts": list(self.counts.items()), "n": self.n},
        }

    @classmethod
    def from_dict(cls, d):
        obj = cls(**d["params"])
        obj.counts = {c: k for c, k in d["state"]["counts"]}
        obj.n = d["state"]["n"]
        return obj
