"""Independent reference values for stats/*_test.go.

Run with Debian's python3 (apt-get install python3-scipy python3-statsmodels
python3-sklearn): /usr/bin/python3 stats/testdata/reference.py
Versions used for the hard-coded tables: see the first line it prints.
"""
import math
from fractions import Fraction

import numpy as np
import scipy
import scipy.optimize
import scipy.stats as st
import sklearn
import statsmodels
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests

print("# scipy", scipy.__version__, "statsmodels", statsmodels.__version__,
      "sklearn", sklearn.__version__, "numpy", np.__version__)

# ---- Wilcoxon -------------------------------------------------------------
W = {}
W["exact10"] = ([0.62, 0.71, 0.55, 0.90, 0.33, 0.47, 0.81, 0.66, 0.59, 0.74],
                [0.58, 0.64, 0.61, 0.71, 0.36, 0.38, 0.69, 0.49, 0.60, 0.52])
W["exact_center"] = ([1, 2, 3, 4], [0, 4, 0, 0])  # d = 1,-2,3,4 : W=2
rng = np.random.default_rng(7)
a = np.round(rng.normal(0.6, 0.2, 60), 4)
b = np.round(a - rng.normal(0.03, 0.1, 60), 4)
W["approx60"] = (list(a), list(b))
W["zeros_ties"] = ([1, 2, 3, 4, 5, 3, 2, 4, 5, 1, 3, 4, 2, 5, 4],
                   [1, 1, 2, 4, 3, 3, 1, 2, 4, 2, 3, 2, 2, 3, 1])
a = rng.integers(0, 6, 80)
b = rng.integers(0, 6, 80)
W["ties80"] = (list(map(int, a)), list(map(int, b)))
for k, (x, y) in W.items():
    d = np.array(x, float) - np.array(y, float)
    r = st.wilcoxon(x, y)
    print(f"wilcoxon {k}: n={len(d)} zeros={int((d == 0).sum())} w={r.statistic!r} p={r.pvalue!r}")
    print("  a =", list(x)); print("  b =", list(y))

# ---- Sign test ------------------------------------------------------------
for k, n in [(3, 10), (0, 5), (5, 10), (1, 1), (40, 100), (930, 2000), (12, 13)]:
    print(f"binomtest k={k} n={n} p={st.binomtest(k, n, 0.5).pvalue!r}")

# ---- McNemar --------------------------------------------------------------
for b, c in [(6, 16), (150, 86), (0, 5), (3, 3), (1, 0), (12, 30), (400, 455)]:
    t = [[0, b], [c, 0]]
    ex = mcnemar(t, exact=True).pvalue
    ch = mcnemar(t, exact=False, correction=True)
    print(f"mcnemar b={b} c={c} exact={ex!r} chi2={ch.statistic!r} p={ch.pvalue!r}")

# ---- Holm -----------------------------------------------------------------
for ps in [[0.01, 0.04, 0.03, 0.005], [0.2, 0.01, 0.5, 0.04, 0.04], [0.9, 0.8], [0.001]]:
    print("holm", ps, "->", list(multipletests(ps, method="holm")[1]))

# ---- Kappa ----------------------------------------------------------------
K = {}
K["wiki50"] = ([1] * 20 + [1] * 5 + [0] * 10 + [0] * 15,
               [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15, 2)
rng2 = np.random.default_rng(11)
h = rng2.integers(0, 5, 40)
j = np.clip(h + rng2.integers(-1, 2, 40), 0, 4)
K["grades5"] = (list(map(int, h)), list(map(int, j)), 5)
K["three"] = ([0, 1, 2, 2, 1, 0, 2, 1, 1, 0, 2, 2, 0, 1],
              [0, 2, 2, 1, 1, 0, 2, 0, 1, 0, 2, 1, 1, 1], 3)
for name, (x, y, k) in K.items():
    print(f"kappa {name}: a={x}\n  b={y}")
    for wname, wt in [("Unweighted", None), ("Linear", "linear"), ("Quadratic", "quadratic")]:
        kap = cohen_kappa_score(x, y, labels=list(range(k)), weights=wt)
        table = np.zeros((k, k))
        for u, v in zip(x, y):
            table[u, v] += 1
        if wt is None:
            res = cohens_kappa(table)
        else:
            res = cohens_kappa(table, wt=wt)
        print(f"  {wname}: sklearn={kap!r} statsmodels={res.kappa!r} ase={res.std_kappa!r} "
              f"lo={res.kappa_low!r} hi={res.kappa_upp!r}")

# ---- Correlation ----------------------------------------------------------
x = [120, 340, 560, 80, 900, 450, 230, 610, 330, 700, 150, 480]
y = [6.0, 7.5, 8.0, 5.0, 9.0, 7.0, 7.0, 8.5, 6.5, 8.0, 5.5, 7.5]
print("pearson", repr(st.pearsonr(x, y)[0]), "spearman", repr(st.spearmanr(x, y)[0]))
x2 = [1, 2, 2, 3, 3, 3, 4, 5]
y2 = [10, 8, 9, 7, 7, 6, 3, 4]
print("pearson2", repr(st.pearsonr(x2, y2)[0]), "spearman2", repr(st.spearmanr(x2, y2)[0]))

# ---- pass@k (exact rationals) --------------------------------------------
def comb(n, k):
    return math.comb(n, k) if 0 <= k <= n else 0
for n, c, k in [(10, 3, 1), (10, 3, 5), (10, 0, 3), (10, 10, 3), (200, 13, 10), (200, 13, 100), (5, 2, 4), (1000, 1, 500)]:
    pa = 1 - Fraction(comb(n - c, k), comb(n, k))
    ph = Fraction(comb(c, k), comb(n, k))
    print(f"passk n={n} c={c} k={k} pass@k={float(pa)!r} pass^k={float(ph)!r}")

# ---- Bradley-Terry: direct MLE with scipy.optimize (independent of MM) -----
def bt_mle(players, comps, prior):
    # comps: (a, b, winner) winner 0=a, 1=b, -1=tie (half win each).
    # prior: that many tied games of each player vs a reference at log 0.
    def nll(th):
        s = 0.0
        g = np.zeros(players)
        for a, b, w in comps:
            wa = 1.0 if w == 0 else 0.0 if w == 1 else 0.5
            pa = 1 / (1 + math.exp(th[b] - th[a]))
            s -= wa * math.log(pa) + (1 - wa) * math.log(1 - pa)
            g[a] -= wa - pa
            g[b] += wa - pa
        for i in range(players):
            pa = 1 / (1 + math.exp(-th[i]))
            s -= prior * (0.5 * math.log(pa) + 0.5 * math.log(1 - pa))
            g[i] -= prior * (0.5 - pa)
        return s, g
    r = scipy.optimize.minimize(nll, np.zeros(players), jac=True, method="BFGS",
                                options={"gtol": 1e-11})
    th = r.x
    elo = 400 / math.log(10) * (th - th.mean()) + 1000
    return list(elo)

comps = []
wins = {  # (a, b): (a wins, b wins, ties)
    (0, 1): (7, 3, 2), (0, 2): (8, 1, 1), (0, 3): (5, 5, 0), (1, 2): (6, 4, 1),
    (1, 3): (2, 6, 2), (2, 3): (3, 7, 0), (0, 4): (2, 0, 0), (3, 4): (4, 1, 1),
}
for (a, b), (wa, wb, t) in wins.items():
    comps += [(a, b, 0)] * wa + [(a, b, 1)] * wb + [(a, b, -1)] * t
print("bt prior1", bt_mle(5, comps, 1.0))

# ---- Percentile bootstrap of the mean, numpy RNG, many resamples ----------
rng3 = np.random.default_rng(3)
xs = np.round(rng3.beta(2, 5, 40), 3)
boot = rng3.choice(xs, size=(200000, len(xs)), replace=True).mean(axis=1)
print("boot xs =", list(xs))
print("boot mean", repr(xs.mean()), "lo", repr(np.percentile(boot, 2.5)), "hi", repr(np.percentile(boot, 97.5)))
