"""Space: sites joined by roads with travel times, some of which a trigger may close.

Worlds keep their road network in state (``state["roads"]``: id -> ``{"a", "b", "minutes", "open"}``)
so that a closure is an ordinary field mutation a read tool can reveal.
"""

from __future__ import annotations

import heapq

__all__ = ["shortest_route"]


def shortest_route(roads: dict, source: str, target: str, avoid: set[str] | None = None) -> tuple[int, list[str]] | None:
    """Fastest open route from ``source`` to ``target``: ``(minutes, [site, ...])``, or None.

    Roads are undirected; closed roads (``open`` false) and sites in ``avoid`` are skipped.
    Ties break on site id so the answer never depends on dict order.
    """
    if source == target:
        return 0, [source]
    adjacency: dict[str, list[tuple[int, str]]] = {}
    for road in roads.values():
        if not road.get("open", True):
            continue
        adjacency.setdefault(road["a"], []).append((road["minutes"], road["b"]))
        adjacency.setdefault(road["b"], []).append((road["minutes"], road["a"]))
    avoid = avoid or set()
    frontier = [(0, source, [source])]
    settled: set[str] = set()
    while frontier:
        minutes, site, path = heapq.heappop(frontier)
        if site == target:
            return minutes, path
        if site in settled:
            continue
        settled.add(site)
        for cost, nxt in sorted(adjacency.get(site, ())):
            if nxt not in settled and nxt not in avoid:
                heapq.heappush(frontier, (minutes + cost, nxt, path + [nxt]))
    return None
