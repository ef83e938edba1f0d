"""How an amount is read: its number and the units it may be in, however a person types it."""

import pytest

from chat.quantities import given, invented, misquoted, quantities, without_unnamed_currency


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("€240", [("240", {"€"})]),
        ("240 €", [("240", {"€"})]),
        ("£1,255.50 in total", [("1255.5", {"£"})]),
        ("a 4% raise", [("4", {"%"})]),
        ("500mg twice a day", [("500", {"mg"})]),
        ("bake at 200C for 40 mins", [("200", {"°C"}), ("40", {"minute"})]),
        ("200 degrees", [("200", {"°C", "°F"})]),
        ("10 pounds", [("10", {"£", "lb"})]),
        ("leaves 07:15, back by 5pm", [("7:15", set()), ("5", {"pm"})]),
        ("the 1990s, flight SK538, on the 14th", [("1990", set()), ("538", set()), ("14", set())]),
        ("a 5k run, a €40k salary", [("5", set()), ("40", {"€"})]),
    ],
)  # fmt: skip
def test_an_amount_is_read_with_its_units(text: str, read: list[tuple[str, set[str]]]) -> None:
    assert [(value, set(units)) for value, units in quantities(text)] == read


def test_only_a_number_the_passages_give_in_other_units_alone_is_misquoted() -> None:
    passages = ["Plumber: part ~£45 + 1hr labour £70", "Physio: 3 sessions, 45 mins each"]
    assert misquoted("Labour was 70 hours and the part £45.", given(passages)) == ["70 hours"]
    # 45 stands as pounds in one passage and as minutes in the other: either reading is theirs.
    assert misquoted("Each session is 45 minutes.", given(passages)) == []
    assert misquoted("There are 3 weeks of sessions.", given(passages)) == []  # "3 sessions" is bare
    assert misquoted("It costs 99 euro.", given(passages)) == []  # a number they do not have is not judged here


def test_a_currency_the_passages_never_name_is_taken_off_a_number_they_write_bare() -> None:
    kitchen = given(["quote came in at 8,450 incl fitting, worktop is extra (quartz ~1,200)"])
    assert without_unnamed_currency("The worktop is about $1,200, the rest $8,450.", kitchen) == (
        "The worktop is about 1,200, the rest 8,450."
    )
    budget = given(["groceries 700, eating out 150", "rent €1,200 on the 1st"])
    # They count in euro elsewhere: "€700" says what they mean; "$700" does not.
    assert without_unnamed_currency("Groceries are €700 a month.", budget) == "Groceries are €700 a month."
    assert without_unnamed_currency("Groceries are $700 a month.", budget) == "Groceries are 700 a month."
    # A number they give with a unit is `misquoted`'s to judge; one they do not have is not judged at all.
    assert without_unnamed_currency("Rent is $1,200 and parking $90.", budget) == "Rent is $1,200 and parking $90."


def test_a_sum_of_money_is_invented_when_the_notes_give_it_in_no_form() -> None:
    notes = given(["rooflight €3k more", "~€1,200 for calcs", "budget 85-95k, not the 60k we had in mind"])
    assert invented("It costs €3,200.", notes) == ["€3,200"]
    assert invented("It costs €61,000 or 4,000 euro.", notes) == ["€61,000", "4,000 euro"]
    assert invented("€3,000 more for the rooflight, €1.2k for calcs, €85,000 to €95,000 in all.", notes) == []
    assert invented("€25,000 over what we had in mind, €1,203 with the stamp.", notes) == []  # 85k - 60k; 1,200 + 3
    assert invented("It takes 3,200 hours.", notes) == []  # not money
