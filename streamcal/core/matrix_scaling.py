"""Vector scaling, matrix scaling and Dirichlet calibration fitted by penalised maximum
likelihood (pure numpy, no river).

All three map a feature vector ``x`` of ``K`` reals (a classifier's logits, or its
log-probabilities) to ``softmax(W x + b)``:

- **vector scaling** (Guo, Pleiss, Sun and Weinberger, 2017): ``W`` diagonal, a scale
  and a bias per class;
- **matrix scaling** (same paper): ``W`` any ``K x K`` matrix, multinomial logistic
  regression on ``x``;
- **Dirichlet calibration** (Kull, Perello-Nieto, Kaengsepp, Silva Filho, Song and
  Flach, 2019): matrix scaling on ``x = log p``, with the paper's ODIR penalty
  (off-diagonal and intercept regularisation).

The fit minimises the penalised mean negative log-likelihood

    F(W, b) = sum_i w_i * (logsumexp(s_i) - s_{i, y_i}) / sum_i w_i
              + lambda / (K (K - 1)) * sum_{j != k} W_jk ** 2
              + mu / K * sum_j b_j ** 2
              + nu / K * sum_j (W_jj - 1) ** 2,

``s_i = W x_i + b``: the first two penalties are the ODIR term of Kull et al. (their
normalisation by the number of off-diagonal entries and of intercepts), the third pulls
the diagonal towards the identity map. Every penalty is > 0, so ``F`` is strictly convex
and has one minimiser even on a window whose classes are separable (where the
likelihood alone has none); that minimiser does not depend on where the search starts,
so a fit warm-started from the previous one is the fit from scratch.

:func:`fit_vector_scaling` and :func:`fit_matrix_scaling` take ``x`` as given;
:func:`fit_dirichlet` takes probabilities. :func:`features` turns probabilities (or
logits) with missing classes into ``x``: ``log(max(p, P_FLOOR))``, a missing class (or
probability 0) being ``P_FLOOR``; with logits, a missing class gets the logit that gives
it probability ``P_FLOOR`` relative to the present ones.

The minimisation is Newton's method with a backtracking (Armijo) line search; each
iteration costs O(n K^4) for a full matrix (the Hessian of the ``K (K + 1)``
parameters), O(n K^2) for vector scaling, and a handful of iterations reach the
minimiser to machine precision.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DEFAULT_L2",
    "DEFAULT_REG_DIAGONAL",
    "DEFAULT_REG_LAMBDA",
    "DEFAULT_REG_MU",
    "P_FLOOR",
    "features",
    "fit_dirichlet",
    "fit_matrix_scaling",
    "fit_vector_scaling",
    "scaling_nll",
]

#: The probability a missing class (or a probability 0) stands for in ``log p``.
P_FLOOR = 1e-12

#: Default penalty of vector and matrix scaling (every parameter towards the identity).
DEFAULT_L2 = 1e-3
#: Defaults of the Dirichlet calibration's ODIR penalty and of its diagonal anchor.
DEFAULT_REG_LAMBDA = 1e-3
DEFAULT_REG_MU = 1e-3
DEFAULT_REG_DIAGONAL = 1e-4

_MAX_ITER = 200
_LOG_FLOOR = float(np.log(P_FLOOR))


def features(values, logits: bool = False) -> np.ndarray:
    """The feature matrix ``x`` of rows of probabilities (or logits), ``NaN`` marking a
    class missing from a row. O(n K).

    Probabilities become ``log(max(p, P_FLOOR))`` (a missing class: ``log P_FLOOR``);
    logits are kept, and a missing class gets ``logsumexp`` of the row's present
    logits plus ``log P_FLOOR`` (the probability ``P_FLOOR`` under their softmax).

    Examples
    --------
    >>> features([[0.5, 0.5, float("nan")]]).round(2).tolist()
    [[-0.69, -0.69, -27.63]]
    >>> features([[0.0, 0.0, float("nan")]], logits=True).round(2).tolist()
    [[0.0, 0.0, -26.94]]

    """
    V = np.array(values, dtype=np.float64, ndmin=2)
    missing = np.isnan(V)
    if not logits:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(np.where(missing, P_FLOOR, np.maximum(V, P_FLOOR)))
    if not missing.any():
        return V
    present = np.where(missing, -np.inf, V)
    m = present.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(present - m).sum(axis=1, keepdims=True))
    return np.where(missing, lse + _LOG_FLOOR, V)


def _check_inputs(owner: str, X, labels, w):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise ValueError(
            f"The 'x' argument of {owner} must be a two-dimensional array of finite "
            f"reals. Got an array of shape {X.shape} instead."
        )
    n, K = X.shape
    y = np.asarray(labels)
    if y.shape != (n,) or (n and (y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= K)):
        raise ValueError(
            f"The 'labels' argument of {owner} must be a sequence of column indices of "
            f"'x', one per row. Got {y!r} instead."
        )
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    if w.shape != (n,) or not np.all((w >= 0) & np.isfinite(w)):
        raise ValueError(
            f"The 'w' argument of {owner} must be a sequence of finite weights >= 0, one "
            f"per row. Got {w!r} instead."
        )
    keep = w > 0
    return X[keep], y[keep].astype(np.intp), w[keep]


def _check_penalty(owner: str, name: str, value) -> float:
    v = float(value)
    if not (v > 0 and np.isfinite(v)):
        raise ValueError(
            f"The '{name}' argument of {owner} must be a finite real number > 0. Got "
            f"{value!r} instead."
        )
    return v


class _Objective:
    """``F`` of the module docstring on fixed data, with its gradient and Hessian in
    the parameters ``theta``: ``(a, b)`` (vector scaling) or ``(W row by row, b)``."""

    def __init__(self, X, y, w, lam, mu, nu, diagonal):
        self.X, self.y, self.diagonal = X, y, diagonal
        self.w = w / w.sum()
        n, K = X.shape
        self.K = K
        self.Y = np.zeros((n, K))
        self.Y[np.arange(n), y] = 1.0
        if diagonal:
            self.coef = np.concatenate([np.full(K, nu / K), np.full(K, mu / K)])
            self.center = np.concatenate([np.ones(K), np.zeros(K)])
        else:
            off = lam / (K * (K - 1))
            C = np.full((K, K + 1), off)
            C[np.arange(K), np.arange(K)] = nu / K
            C[:, K] = mu / K
            self.coef = C.ravel()
            E = np.zeros((K, K + 1))
            E[np.arange(K), np.arange(K)] = 1.0
            self.center = E.ravel()
        self.Xt = None if diagonal else np.hstack([X, np.ones((n, 1))])

    def scores(self, theta):
        K = self.K
        if self.diagonal:
            return self.X * theta[:K] + theta[K:]
        return np.einsum("ia,ja->ij", self.Xt, theta.reshape(K, K + 1))

    def value(self, theta) -> float:
        S = self.scores(theta)
        m = S.max(axis=1)
        lse = m + np.log(np.exp(S - m[:, None]).sum(axis=1))
        nll = float(np.dot(self.w, lse - S[np.arange(len(S)), self.y]))
        return nll + float(np.dot(self.coef, (theta - self.center) ** 2))

    def derivatives(self, theta):
        """Gradient and Hessian at ``theta``."""
        S = self.scores(theta)
        E = np.exp(S - S.max(axis=1, keepdims=True))
        P = E / E.sum(axis=1, keepdims=True)
        R = self.w[:, None] * (P - self.Y)
        wP = self.w[:, None] * P
        # einsum, not matmul: these products are small, and a threaded BLAS call on a
        # busy machine costs many times the arithmetic
        if self.diagonal:
            X = self.X
            PX = P * X
            wPX = self.w[:, None] * PX
            g = np.concatenate([(R * X).sum(axis=0), R.sum(axis=0)])
            haa = np.diag((wPX * X).sum(axis=0)) - np.einsum("ij,ik->jk", wPX, PX)
            hab = np.diag(wPX.sum(axis=0)) - np.einsum("ij,ik->jk", wPX, P)
            hbb = np.diag(wP.sum(axis=0)) - np.einsum("ij,ik->jk", wP, P)
            H = np.block([[haa, hab], [hab.T, hbb]])
        else:
            K, Xt = self.K, self.Xt
            d = K + 1
            g = np.einsum("ij,ia->ja", R, Xt).ravel()
            B = (P[:, :, None] * Xt[:, None, :]).reshape(len(P), K * d)
            H = -np.einsum("i,ia,ib->ab", self.w, B, B)
            blocks = np.einsum("ij,ia,ib->jab", wP, Xt, Xt)
            for j in range(K):
                H[j * d:(j + 1) * d, j * d:(j + 1) * d] += blocks[j]
        g = g + 2.0 * self.coef * (theta - self.center)
        H[np.diag_indices_from(H)] += 2.0 * self.coef
        return g, H


def _minimise(obj: _Objective, theta: np.ndarray) -> np.ndarray:
    """Newton's method from ``theta``, to machine precision: backtracking (Armijo)
    while the Newton decrement is large; full steps once it is below 1e-12 (the
    quadratic region, where rounding would spoil the Armijo test), until a step is at
    the rounding level of ``theta``."""
    f = obj.value(theta)
    for _ in range(_MAX_ITER):
        g, H = obj.derivatives(theta)
        try:
            step = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:  # pragma: no cover - H is positive definite
            step = -g
        decrement = -float(np.dot(g, step))
        if not np.isfinite(decrement):  # overflow (features near the float range)
            break
        if not decrement > 0.0:  # not a descent direction (rounding): fall back on -g
            step, decrement = -g, float(np.dot(g, g))
        if decrement <= 1e-30:
            break
        if decrement <= 1e-12:
            theta = theta + step
            if np.max(np.abs(step)) <= 1e-14 * (1.0 + np.max(np.abs(theta))):
                break
            continue
        t = 1.0
        while True:
            cand = theta + t * step
            fc = obj.value(cand)
            if fc <= f - 1e-4 * t * decrement or t < 1e-10:
                break
            t *= 0.5
        theta, f = cand, fc
    return theta


def _fit(owner, X, labels, w, lam, mu, nu, diagonal, init):
    X, y, w = _check_inputs(owner, X, labels, w)
    n, K = X.shape
    if n == 0 or K < 2:
        return None
    obj = _Objective(X, y, w, lam, mu, nu, diagonal)
    if init is None:
        W0, b0 = np.eye(K), np.zeros(K)
    else:
        W0, b0 = (np.asarray(a, dtype=np.float64) for a in init)
        if W0.shape != (K, K) or b0.shape != (K,):
            raise ValueError(
                f"The 'init' argument of {owner} must be a pair (W, b) of shapes "
                f"({K}, {K}) and ({K},). Got shapes {W0.shape} and {b0.shape} instead."
            )
    if diagonal:
        theta = np.concatenate([np.diag(W0), b0])
    else:
        theta = np.hstack([W0, b0[:, None]]).ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        theta = _minimise(obj, theta)
        if not (np.isfinite(theta).all() and np.isfinite(obj.value(theta))):
            return None
    if diagonal:
        return np.diag(theta[:K]), theta[K:].copy()
    T = theta.reshape(K, K + 1)
    return T[:, :K].copy(), T[:, K].copy()


def scaling_nll(W, b, x, labels, w=None) -> float:
    """The weighted mean negative log-likelihood of ``softmax(W x + b)`` (no penalty).
    O(n K^2).

    Examples
    --------
    >>> import numpy as np
    >>> round(scaling_nll(np.eye(2), np.zeros(2), [[0.0, 0.0]], [0]), 6)
    0.693147

    """
    X, y, w = _check_inputs("scaling_nll", x, labels, w)
    S = X @ np.asarray(W, dtype=np.float64).T + np.asarray(b, dtype=np.float64)
    m = S.max(axis=1)
    lse = m + np.log(np.exp(S - m[:, None]).sum(axis=1))
    return float(np.dot(w, lse - S[np.arange(len(S)), y]) / w.sum())


def fit_vector_scaling(x, labels, w=None, l2: float = DEFAULT_L2, init=None):
    """Vector scaling: the diagonal ``W`` and the ``b`` minimising the penalised NLL of
    ``softmax(W x + b)`` (module docstring, with ``mu = nu = l2``), or None when no row
    of positive weight informs it (none, or fewer than two columns) or the features are
    too large for the fit to stay within floating point.

    Parameters
    ----------
    x
        Array ``(n, K)`` of finite features (logits, or :func:`features`).
    labels
        Column index of each row's observed class.
    w
        Non-negative row weights (default: all 1); only their ratios matter.
    l2
        Penalty (> 0) on each scale's distance to 1 and each bias's to 0.
    init
        Starting point ``(W, b)`` (a warm start; the minimiser does not depend on it).

    Returns
    -------
    tuple of numpy arrays or None
        ``(W, b)``, ``W`` a ``(K, K)`` diagonal matrix.

    Examples
    --------
    An over-confident forecaster (class 0 announced at 0.9, right 70% of the time):

    >>> import numpy as np
    >>> x = np.log([[0.9, 0.05, 0.05]] * 10)
    >>> W, b = fit_vector_scaling(x, [0] * 7 + [1] * 2 + [2])
    >>> s = W @ x[0] + b
    >>> np.round(np.exp(s) / np.exp(s).sum(), 3).tolist()
    [0.7, 0.2, 0.1]

    """
    owner = "fit_vector_scaling"
    pen = _check_penalty(owner, "l2", l2)
    return _fit(owner, x, labels, w, 0.0, pen, pen, True, init)


def fit_matrix_scaling(x, labels, w=None, l2: float = DEFAULT_L2, init=None):
    """Matrix scaling: the ``W`` and ``b`` minimising the penalised NLL of
    ``softmax(W x + b)`` (module docstring, with ``lambda = mu = nu = l2``), or None
    when no row of positive weight informs it. Parameters and return value as in
    :func:`fit_vector_scaling`, ``W`` a full matrix.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.log([[0.9, 0.05, 0.05]] * 10)
    >>> W, b = fit_matrix_scaling(x, [0] * 7 + [1] * 2 + [2])
    >>> s = W @ x[0] + b
    >>> np.round(np.exp(s) / np.exp(s).sum(), 3).tolist()
    [0.7, 0.2, 0.1]

    """
    owner = "fit_matrix_scaling"
    pen = _check_penalty(owner, "l2", l2)
    return _fit(owner, x, labels, w, pen, pen, pen, False, init)


def fit_dirichlet(
    probabilities,
    labels,
    w=None,
    reg_lambda: float = DEFAULT_REG_LAMBDA,
    reg_mu: float = DEFAULT_REG_MU,
    reg_diagonal: float = DEFAULT_REG_DIAGONAL,
    init=None,
):
    """Dirichlet calibration: matrix scaling on ``log p`` (:func:`features`) with the
    ODIR penalty, or None when no row of positive weight informs it.

    Parameters
    ----------
    probabilities
        Array ``(n, K)`` of probabilities; ``NaN`` marks a class missing from a row
        (as probability 0, both become ``P_FLOOR``).
    labels
        Column index of each row's observed class.
    w
        Non-negative row weights (default: all 1); only their ratios matter.
    reg_lambda
        ODIR's ``lambda`` (> 0): the penalty on the off-diagonal weights.
    reg_mu
        ODIR's ``mu`` (> 0): the penalty on the intercepts.
    reg_diagonal
        ``nu`` (> 0): the pull of the diagonal weights towards 1, which ODIR leaves
        free (see the module docstring: it keeps the minimiser finite and unique).
    init
        Starting point ``(W, b)`` (a warm start; the minimiser does not depend on it).

    Returns
    -------
    tuple of numpy arrays or None
        ``(W, b)``: the calibrated vector of ``p`` is ``softmax(W log p + b)``.

    Examples
    --------
    >>> import numpy as np
    >>> p = [[0.9, 0.05, 0.05]] * 10
    >>> W, b = fit_dirichlet(p, [0] * 7 + [1] * 2 + [2])
    >>> s = W @ np.log(p[0]) + b
    >>> np.round(np.exp(s) / np.exp(s).sum(), 3).tolist()
    [0.7, 0.2, 0.1]

    """
    owner = "fit_dirichlet"
    lam = _check_penalty(owner, "reg_lambda", reg_lambda)
    mu = _check_penalty(owner, "reg_mu", reg_mu)
    nu = _check_penalty(owner, "reg_diagonal", reg_diagonal)
    P = np.array(probabilities, dtype=np.float64, ndmin=2)
    if np.any(P[~np.isnan(P)] < 0) or np.any(P[~np.isnan(P)] > 1):
        raise ValueError(
            "The 'probabilities' argument of fit_dirichlet must hold probabilities in "
            "[0, 1] (NaN: a missing class). Got values outside [0, 1] instead."
        )
    return _fit(owner, features(P), labels, w, lam, mu, nu, False, init)
