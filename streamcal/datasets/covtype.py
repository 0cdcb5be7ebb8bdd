"""Predicted probabilities of a logistic regression on UCI Covertype (2, 3 and 4 classes).

``data/covtype/cover{K}_{Pcal,Ptest,Ycal,Ytest}.npy``, shipped unmodified, are the
predictions used in the experiments of Berta, Bach and Jordan (2024), "Classifier
calibration with ROC-regularized isotonic regression", AISTATS, PMLR 238, 1972-1980
(figures 2, 4 and 5; published with their code at github.com/eugeneberta/Calibration-ROC-IR).
A logistic regression was fitted on the first ``K`` classes (K = 2, 3, 4) of the UCI
Covertype data set (Blackard, 1998; UCI Machine Learning Repository, CC BY 4.0); the
files hold its predicted probabilities and the one-hot labels of 500 calibration rows and
1,000 test rows.
"""

from __future__ import annotations

import importlib.resources
import io

import numpy as np

from streamcal import _validation as V

__all__ = ["COVTYPE_N_CLASSES", "covtype_predictions"]

#: The numbers of classes for which predictions are shipped.
COVTYPE_N_CLASSES = (2, 3, 4)


def _load(name: str) -> np.ndarray:
    data = (
        importlib.resources.files("streamcal.datasets")
        .joinpath("data", "covtype", name)
        .read_bytes()
    )
    return np.load(io.BytesIO(data), allow_pickle=False)


def covtype_predictions(
    n_classes: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Calibration and test predictions of a logistic regression on ``n_classes``
    classes of UCI Covertype, with their one-hot labels (Berta, Bach and Jordan, 2024).

    Parameters
    ----------
    n_classes
        2, 3 or 4: the classifier was trained on the first ``n_classes`` cover types.

    Returns
    -------
    tuple
        ``(P_cal, Y_cal, P_test, Y_test)``, float64 arrays: ``P_cal`` (500, K) and
        ``P_test`` (1000, K) predicted probabilities (rows sum to 1), ``Y_cal`` and
        ``Y_test`` the one-hot labels, same shapes. For a binary calibrator take
        ``P[:, 1]`` as the score and ``Y[:, 1]`` as the label.

    Examples
    --------
    >>> from streamcal.datasets import covtype_predictions
    >>> P_cal, Y_cal, P_test, Y_test = covtype_predictions(3)
    >>> P_cal.shape, Y_cal.shape, P_test.shape, Y_test.shape
    ((500, 3), (500, 3), (1000, 3), (1000, 3))
    >>> Y_cal.sum(axis=0).astype(int).tolist()
    [162, 162, 176]

    """
    V.check_param(
        "covtype_predictions",
        "n_classes",
        n_classes,
        V.is_integer(n_classes) and n_classes in COVTYPE_N_CLASSES,
        "one of 2, 3, 4",
    )
    k = int(n_classes)
    return tuple(
        _load(f"cover{k}_{part}.npy") for part in ("Pcal", "Ycal", "Ptest", "Ytest")
    )
