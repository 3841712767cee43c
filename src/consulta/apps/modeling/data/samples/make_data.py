"""Makes the sample problems' data (synthetic, deterministic: numpy seed 2026). Run it to regenerate the CSVs:

    python src/consulta/apps/modeling/data/samples/make_data.py

electricity_demand/: a province's monthly electricity use by sector, 2015-01 … 2024-12, with temperature (degree
days) and yearly GDP and population; a trend, a summer and a winter peak, and the 2020 dip.
influenza_outbreak/: an influenza outbreak's daily reports in a city of 1.2 million (a stochastic SIR epidemic with
35 % of infections reported); the report of day 38 is sent twice, as real reporting systems do.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def _write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def electricity(rng: np.random.Generator) -> None:
    folder = HERE / "electricity_demand"
    rows, years = [], {}
    for year in range(2015, 2025):
        growth = 1.045 ** (year - 2015) * (0.955 if year == 2020 else 1.0)
        gdp = 2650.0 * 1.062 ** (year - 2015) * (0.985 if year == 2020 else 1.0) + rng.normal(0, 15)
        years[year] = (round(gdp, 1), round(48.6 + 0.21 * (year - 2015) + rng.normal(0, 0.03), 2))
        for month in range(1, 13):
            temp = 16.5 + 12.5 * math.sin(2 * math.pi * (month - 4.2) / 12) + 0.04 * (year - 2015) + rng.normal(0, 1.1)
            cdd = max(0.0, temp - 22.0) * 30.4 + abs(rng.normal(0, 6))
            hdd = max(0.0, 14.0 - temp) * 30.4 + abs(rng.normal(0, 6))
            days = [31, 29 if year % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            residential = (1480 + 2.9 * cdd + 1.7 * hdd) * growth * days / 30.4 + rng.normal(0, 35)
            commercial = (1120 + 1.9 * cdd + 0.8 * hdd) * growth * days / 30.4 + rng.normal(0, 30)
            industrial = 4310 * growth * (0.86 if month == 2 else 1.0) * days / 30.4 + rng.normal(0, 80)
            parts = [round(residential, 1), round(commercial, 1), round(industrial, 1)]
            rows.append(
                [f"{year}-{month:02d}", *parts, round(sum(parts), 1), round(temp, 1), round(cdd, 1), round(hdd, 1)]
            )
    _write(
        folder / "demand_monthly.csv",
        [
            "month",
            "residential_gwh",
            "commercial_gwh",
            "industrial_gwh",
            "total_gwh",
            "avg_temp_c",
            "cooling_degree_days",
            "heating_degree_days",
        ],
        rows,
    )
    _write(
        folder / "economy_yearly.csv",
        ["year", "gdp_billion_cny", "population_million"],
        [[y, *v] for y, v in years.items()],
    )


def influenza(rng: np.random.Generator) -> None:
    folder = HERE / "influenza_outbreak"
    population, beta, gamma, report = 1_200_000, 0.42, 1 / 4.5, 0.35
    s, i, r = population - 40, 40, 0
    cumulative, recovered_reported, rows = 0, 0, []
    active: list[int] = []
    start = np.datetime64("2025-11-03")
    for day in range(1, 71):
        infections = rng.binomial(s, 1 - math.exp(-beta * i / population))
        recoveries = rng.binomial(i, 1 - math.exp(-gamma))
        s, i, r = s - infections, i + infections - recoveries, r + recoveries
        new = int(rng.binomial(infections, report))
        cumulative += new
        active.append(new)
        recovered_reported += sum(active[-6:-5])  # reported cases recover (are discharged from follow-up) after 5 days
        hospitalized = int(round(0.028 * sum(active[-7:]) + rng.normal(0, 3))) if day > 1 else 0
        rows.append([str(start + day - 1), day, new, cumulative, max(hospitalized, 0), recovered_reported])
    rows.insert(38, list(rows[37]))  # the report of day 38 arrives twice
    _write(
        folder / "daily_reports.csv",
        ["date", "day", "new_cases", "cumulative_cases", "hospitalized", "recovered"],
        rows,
    )


if __name__ == "__main__":
    rng = np.random.default_rng(2026)
    electricity(rng)
    influenza(rng)
