"""Write the long quality case (about 40 pages) from a fixed seed.

Run once; its output ``cases/18_long_handbook.md`` is committed like every other case, so
the ground truth never changes unless this script (and the seed) is changed on purpose::

    python -m bench.quality.make_long_case
"""

from __future__ import annotations

import random

from bench.paths import CASES_DIR

SEED = 18
SUBJECTS = [
    "The maintenance team",
    "Each depot manager",
    "The night shift",
    "A new driver",
    "The planning office",
    "Every inspector",
    "The safety committee",
    "The workshop",
    "A duty supervisor",
    "The training coordinator",
    "The fleet engineer",
    "Each crew",
]
VERBS = [
    "checks",
    "records",
    "reviews",
    "reports",
    "schedules",
    "inspects",
    "confirms",
    "updates",
    "compares",
    "approves",
    "documents",
    "tests",
]
OBJECTS = [
    "the brake wear on every vehicle",
    "the fuel consumption of the previous week",
    "the tyre pressures before the first departure",
    "the defects noted by drivers",
    "the timetable for the coming month",
    "the condition of the wheelchair ramps",
    "the readings of the tachograph",
    "the spare parts held in the store",
    "the cleaning log of the passenger saloon",
    "the results of the emission test",
    "the fire extinguishers on board",
    "the charging records of the electric buses",
]
TAILS = [
    "before the vehicle leaves the depot",
    "at the end of every shift",
    "once a week on Monday morning",
    "whenever a fault has been reported",
    "in the presence of a second member of staff",
    "using the standard form",
    "and keeps the result for two years",
    "so that trends can be spotted early",
    "unless the vehicle is already off the road",
    "and informs the control room",
]
TOPICS = [
    "Vehicle Checks",
    "Driver Duties",
    "Workshop Practice",
    "Electric Fleet",
    "Passenger Safety",
    "Incident Handling",
    "Training and Assessment",
    "Records and Audits",
]
SECTIONS = [
    "Purpose",
    "Responsibilities",
    "Daily Routine",
    "Weekly Routine",
    "Exceptions",
    "Escalation",
    "Records",
    "Review",
]
DEPOTS = ["Northgate", "Riverside", "Hill Street", "Airport", "Eastfield", "Quayside"]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}."


def paragraph(rng: random.Random, n: int) -> str:
    return " ".join(sentence(rng) for _ in range(n))


def build() -> str:
    rng = random.Random(SEED)
    out = [
        "---",
        "header: Metro Bus Company - Operations Handbook",
        "outline: yes",
        "footer: Page {page} of {pages}",
        "---",
        "# Operations Handbook",
        "",
        paragraph(rng, 5),
        "",
    ]
    for c, topic in enumerate(TOPICS, start=1):
        out += [f"## {c}. {topic}", "", paragraph(rng, 6), ""]
        for s, section in enumerate(SECTIONS[: 5 + c % 4], start=1):
            out += [f"### {c}.{s} {topic}: {section}", "", paragraph(rng, 11), ""]
            kind = (c * 7 + s) % 5
            if kind == 0:
                out += [f"- {sentence(rng)[:-1]}" for _ in range(4)] + [""]
            elif kind == 1:
                out += [f"{i}. {sentence(rng)}" for i in range(1, 5)] + [""]
            elif kind == 2:
                out += ["| Depot | Vehicles | Checks done | Defects found |", "| --- | --- | --- | --- |"]
                for depot in rng.sample(DEPOTS, 4):
                    v = rng.randint(20, 90)
                    out.append(f"| {depot} | {v} | {v * rng.randint(20, 30)} | {rng.randint(0, 40)} |")
                out.append("")
            elif kind == 3:
                out += [
                    f"- {sentence(rng)[:-1]}",
                    f"    - {sentence(rng)[:-1]}",
                    f"    - {sentence(rng)[:-1]}",
                    f"- {sentence(rng)[:-1]}",
                    "",
                ]
            out += [paragraph(rng, 8), ""]
    return "\n".join(out)


def main() -> int:
    (CASES_DIR / "18_long_handbook.md").write_text(build(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
