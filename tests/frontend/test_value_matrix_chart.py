"""The dashboard's value matrix keeps every paper inside the plot, however many share a position."""
from __future__ import annotations

from types import SimpleNamespace

from frontend.charts import value_matrix_chart


def _score(i: int, cost: float, value: float) -> SimpleNamespace:
    paper = SimpleNamespace(arxiv_id=f"2401.{i:05d}", title=f"paper {i}")
    return SimpleNamespace(paper=paper, implementation_cost=cost, production_value=value, quadrant="q",
                           value_matrix={})


def test_two_hundred_papers_on_one_spot_stay_inside_the_plot_and_near_their_spot() -> None:
    chart = value_matrix_chart([_score(i, 1.0, 3.0) for i in range(200)] + [_score(999, 5.0, 0.0)],
                               high_value=3.0, high_cost=1.0)
    scale = chart.size / chart.axis_max
    for p in chart.points:
        assert chart.left <= p.x <= chart.right and chart.top <= p.y <= chart.bottom, p
    crowd = [p for p in chart.points if p.cost == 1.0]
    centre_x, centre_y = chart.left + 1.0 * scale, chart.top + chart.size - 3.0 * scale
    assert max(((p.x - centre_x) ** 2 + (p.y - centre_y) ** 2) ** 0.5 for p in crowd) <= scale / 2 + 0.1


def test_a_few_papers_on_one_spot_do_not_hide_each_other() -> None:
    chart = value_matrix_chart([_score(i, 2.0, 2.0) for i in range(4)], high_value=3.0, high_cost=1.0)
    assert len({(p.x, p.y) for p in chart.points}) == 4
