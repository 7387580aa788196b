"""Two samples compared as distributions, for the parity tests of random draws: a category's
share (five standard errors) and a Kolmogorov-Smirnov distance (its critical value, at 0.001 by default)."""
import collections
import math


def same_categories(a, b, what, categories=2):
    """Each category's share in a and b within five standard errors of their difference, over at
    least `categories` categories."""
    ca, cb = collections.Counter(a), collections.Counter(b)
    for key in set(ca) | set(cb):
        pa, pb = ca[key] / len(a), cb[key] / len(b)
        p = (ca[key] + cb[key]) / (len(a) + len(b))
        bound = 5 * math.sqrt(max(p * (1 - p), 1e-4) * (1 / len(a) + 1 / len(b)))
        assert abs(pa - pb) <= bound, f"{what} {key}: conveyor {pb:.4f}, torchvision {pa:.4f}"
    assert len(ca) >= categories, f"{what}: {len(ca)} categories, the comparison would be vacuous"


def same_distribution(a, b, what, alpha=0.001):
    """The two-sample Kolmogorov-Smirnov distance under its critical value at `alpha` (a test making
    many comparisons passes a smaller one, so that all of them together fail a matching
    distribution at about 0.001)."""
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] == x:
            i += 1
        while j < len(b) and b[j] == x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    c = math.sqrt(-math.log(alpha / 2) / 2)
    assert d < c * math.sqrt((len(a) + len(b)) / (len(a) * len(b))), f"{what}: KS distance {d:.4f}"
