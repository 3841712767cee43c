"""A validator's REJECTED verdict shows evidence: a finished sentence naming a file of the workspace."""

from __future__ import annotations

import pytest

from consulta.apps.modeling._director import rejection_shows_evidence

NAMES = {"clean_data.py", "herd_2023.csv"}


@pytest.mark.parametrize(
    "reason",
    [
        # seen on the embedded model, three times in one run of the herd problem: cut at its length limit
        "The file 'clean_data.py' is not correct. It should be named 'clean_data.py' and",
        "The file 'clean_data.py' should be named 'clean_data.py'.",  # a file's own name says nothing wrong with it
        "The cleaning is not correct.",  # no file named
        # seen on the embedded model, three times in one run of fleet_ahp_en (the file was there): a file that is
        # there is not missing
        "The 'clean_data.py' file is missing, which is essential for the pairwise data.",
        "The file 'clean_data.py' is missing.",
        "clean_data.py does not exist.",
        "缺少 clean_data.py 文件。",
        "herd_2023.csv 不存在。",
    ],
)
def test_a_rejection_without_evidence_is_asked_again(reason: str) -> None:
    assert not rejection_shows_evidence([reason], NAMES)


@pytest.mark.parametrize(
    "reason",
    [
        "clean_data.py drops 12 rows of herd_2023.csv without saying why.",
        "herd_2023.csv 中年龄 7 出现了两次。",
        "herd_2023.csv is missing age 5 in the female rows.",  # what is missing is in the file: evidence
    ],
)
def test_a_rejection_that_names_what_is_wrong_stands(reason: str) -> None:
    assert rejection_shows_evidence(["Some words", reason], NAMES)
