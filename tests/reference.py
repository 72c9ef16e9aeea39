"""Slow, obviously correct references written straight from the papers.

Nothing here is optimised: dense numpy vectors, one example at a time, every
hypothesis kept. The tests compare marginkit's compiled estimators with these.
"""

import numpy as np
import scipy.sparse as sp


def link(w, r):
    """f_i(w) = sign(w_i) |w_i|^(r-1) / ||w||_r^(r-2) (Gentile 2001, section 2); f(0) = 0.

    With r = q this is f; with r = p it is f^-1.
    """
    norm = np.sum(np.abs(w) ** r) ** (1.0 / r)
    if norm == 0.0:
        return np.zeros_like(w)
    return np.sign(w) * np.abs(w) ** (r - 1.0) / norm ** (r - 2.0)


def pnorm(x, r):
    return np.sum(np.abs(x) ** r) ** (1.0 / r)


def alma_binary(X, y, p, alpha, B, C, n_epochs=1):
    """ALMA_p(alpha; B, C), Figure 1 of Gentile (JMLR 2001), for labels in {-1, +1}.

    Returns the list of hypotheses w_1 = 0, w_2, ... and the number of trials each
    one was the post-trial hypothesis for (the Freund-Schapire counts c_k).
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    q = p / (p - 1.0)
    w = np.zeros(X.shape[1])
    k = 1
    hyps, counts = [w], [0]
    for _ in range(n_epochs):
        for x, yt in zip(X, y, strict=True):
            nx = pnorm(x, p)
            if nx > 0:  # footnote 3: x = 0 never updates
                x_hat = x / nx
                gamma_k = B * np.sqrt(p - 1.0) / np.sqrt(k)
                if yt * (w @ x_hat) <= (1.0 - alpha) * gamma_k:
                    eta_k = C / (np.sqrt(p - 1.0) * np.sqrt(k))
                    w_prime = link(link(w, q) + eta_k * yt * x_hat, p)
                    w = w_prime / max(1.0, pnorm(w_prime, q))
                    k += 1
                    hyps.append(w)
                    counts.append(0)
            counts[-1] += 1
    return hyps, counts


def normalise(X, p):
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    norms = np.array([pnorm(x, p) for x in X])
    return X / np.where(norms > 0, norms, 1.0)[:, None]


def augment(X, R):
    """(x, -R): the bias augmentation of section 1 of Ishibashi, Hatano and Takeda."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    return np.hstack([X, np.full((X.shape[0], 1), -R)])


def ovr_targets(y, classes):
    if len(classes) == 2:
        return [np.where(y == classes[1], 1.0, -1.0)]
    return [np.where(y == c, 1.0, -1.0) for c in classes]


def alma_fit(X, y, p, alpha, B, C, n_epochs=1, fit_intercept=False):
    """One-vs-rest ALMA_p: per binary problem, (hypotheses, counts)."""
    classes = np.unique(y)
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    R = None
    if fit_intercept:
        R = max(pnorm(x, p) for x in X) or 1.0
        X = augment(X, R)
    runs = [alma_binary(X, t, p, alpha, B, C, n_epochs) for t in ovr_targets(y, classes)]
    return runs, R


def alma_scores(runs, X, p, output, R=None):
    """Decision values of the 'last', 'avg' or 'voted' hypothesis on normalised X."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    if R is not None:
        X = augment(X, R)
    Xh = normalise(X, p)
    cols = []
    for hyps, counts in runs:
        if output == "last":
            cols.append(Xh @ hyps[-1])
        elif output == "avg":
            cols.append(Xh @ (sum(c * w for w, c in zip(hyps, counts, strict=True)) / sum(counts)))
        else:
            cols.append(
                sum(c * np.sign(Xh @ w) for w, c in zip(hyps, counts, strict=True)) / sum(counts)
            )
    scores = np.column_stack(cols)
    return scores.ravel() if scores.shape[1] == 1 else scores
