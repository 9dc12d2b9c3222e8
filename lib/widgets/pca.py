"""Two-dimensional pictures of hidden states: a PCA, and nearest neighbours in the full space.

The 2-D picture distorts distances; the neighbour lists are computed before projecting, so a
view can show which points are really close.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class PCA:
    """A 2-D principal-component projection fitted on some vectors."""

    mean: torch.Tensor  # (H,)
    components: torch.Tensor  # (2, H) unit directions of largest variance
    explained: list[float]  # share of the variance along each direction

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """x (N, H) -> (N, 2)."""
        return (x.double().cpu() - self.mean) @ self.components.T


def pca2(x: torch.Tensor) -> PCA:
    """Fit a 2-D PCA to x (N, H) by SVD (in float64 on the CPU: small, deterministic).

    Each direction's sign is fixed so that its largest loading is positive; otherwise the
    picture could flip between two runs on the same data.
    """
    x = x.detach().double().cpu()  # (N, H)
    mean = x.mean(0)  # (H,)
    _, s, vh = torch.linalg.svd(x - mean, full_matrices=False)  # (r,), (r, H)
    comps = torch.zeros(2, x.size(1), dtype=torch.float64)  # (2, H)
    n = min(2, vh.size(0))
    comps[:n] = vh[:n]
    idx = comps.abs().argmax(1, keepdim=True)  # (2, 1)
    comps *= torch.where(comps.gather(1, idx) < 0, -1.0, 1.0)
    total = float((s ** 2).sum())
    explained = [float(s[i] ** 2) / total if i < n and total > 0 else 0.0 for i in range(2)]
    return PCA(mean, comps, explained)


def nearest_neighbours(x: torch.Tensor, k: int) -> list[list[int]]:
    """For each row of x (N, H), the k other rows most similar to it (cosine), best first."""
    unit = nn.functional.normalize(x.double(), dim=1)  # (N, H)
    sim = unit @ unit.T  # (N, N) cosine similarity
    sim.fill_diagonal_(-2.0)  # below any similarity: a point is not its own neighbour
    return sim.topk(min(k, x.size(0) - 1), dim=1).indices.tolist()  # (N, k)
