"""Writes federal-register-three-columns.pdf: four Letter pages of a fictional airworthiness
directive, set like the US Federal Register in three justified columns of 9 pt Times.

Every page carries the Register's running head, with the page number on the outer side (left on
even pages, right on odd ones, as in a bound book), and a small docket stamp along the foot whose
frame number changes from page to page ("VerDate ... Frm 00012 ..."): the page furniture that a PDF
reader must leave out of passages. The text flows from column to column and page to page, so that
sentences cross column breaks, and a reader that read across the columns would cut them.

The text is ours, written for this file: the company, the aircraft, the people, addresses, telephone
numbers, docket and amendment numbers and the Federal Register citations are all invented. Only the
core fonts and Latin-1 text are used, so that pypdf extracts the text exactly. In TEXT a blank line
separates paragraphs, "## " starts a bold heading and "**Run-in:**" a paragraph with a bold lead.

The script checks what the tests rely on (the sentence STS_SENTENCE whole in one column of page 2,
in a paragraph that crosses a column break; page 4 using its words apart) by reading the written
file back with pypdf, and prints the sentences that cross a column break.

# fpdf2 is not a project dependency:
# python3 -m venv /tmp/pdfgen && /tmp/pdfgen/bin/pip install fpdf2 pypdf && /tmp/pdfgen/bin/python make_three_column.py
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from fpdf import FPDF
from pypdf import PageObject, PdfReader

HERE = Path(__file__).resolve().parent
OUT = HERE / "federal-register-three-columns.pdf"
FIRST_PAGE = 47901
FIRST_FRAME = 11
RUNNING_HEAD = "Federal Register / Vol. 85, No. 152 / Thursday, August 6, 2020 / Rules and Regulations"
STAMP = (
    "VerDate Sep<11>2014   16:21 Aug 05, 2020   Jkt 250001   PO 00000   Frm {frame:05d}   Fmt 4700   "
    "Sfmt 4700   E:\\FR\\FM\\06AUR1.SGM   06AUR1"
)
STS_SENTENCE = "The STS provides automatic trim of the horizontal stabilizer during manual flight."
MARGIN = 14.0
GUTTER = 5.0
BODY_TOP = 20.0
BODY_BOTTOM_MARGIN = 17.0
COLUMNS = 3


class RegisterPdf(FPDF):
    """A Letter page with the Register's running head and, at its foot, the docket stamp."""

    def __init__(self) -> None:
        super().__init__(orientation="portrait", unit="mm", format="Letter")
        self.set_margins(left=MARGIN, top=BODY_TOP, right=MARGIN)
        self.set_auto_page_break(auto=True, margin=BODY_BOTTOM_MARGIN)

    def header(self) -> None:
        number = str(FIRST_PAGE + self.page_no() - 1)
        self.set_font("Times", "", 8)
        width = self.w - 2 * MARGIN
        if self.page_no() % 2 == 0:
            self.set_xy(MARGIN, 10)
            self.cell(14, 4, number, align="L")
            self.set_font("Times", "I", 8)
            self.cell(width - 14, 4, RUNNING_HEAD, align="L")
        else:
            self.set_font("Times", "I", 8)
            self.set_xy(MARGIN, 10)
            self.cell(width - 14, 4, RUNNING_HEAD, align="R")
            self.set_font("Times", "", 8)
            self.cell(14, 4, number, align="R")
        self.set_line_width(0.2)
        self.line(MARGIN, 15, self.w - MARGIN, 15)
        self.set_y(BODY_TOP)

    def footer(self) -> None:
        self.set_xy(MARGIN, self.h - 11)
        self.set_font("Helvetica", "", 5.5)
        self.set_text_color(70, 70, 70)
        self.cell(0, 3, STAMP.format(frame=FIRST_FRAME + self.page_no() - 1), align="L")
        self.set_text_color(0, 0, 0)


def blocks(text: str) -> list[str]:
    """The paragraphs and headings of a text, each joined into one line."""
    return [" ".join(block.split()) for block in text.strip().split("\n\n")]


def render() -> Path:
    pdf = RegisterPdf()
    pdf.set_title("Airworthiness Directives; Corvane Aircraft Corporation Model CV-300 Airplanes")
    pdf.set_author("Second Brain test data (fictional)")
    pdf.set_creator("make_three_column.py (fpdf2)")
    pdf.set_creation_date(dt.datetime(2020, 8, 5, 16, 21, tzinfo=dt.timezone(dt.timedelta(hours=-4))))
    pdf.add_page()
    with pdf.text_columns(ncols=COLUMNS, gutter=GUTTER, text_align="J", line_height=1.12) as columns:
        for block in blocks(TEXT):
            block.encode("latin-1")  # core fonts only: fail here rather than in the PDF
            if block.startswith("## "):
                pdf.set_font("Times", "B", 9)
                with columns.paragraph(text_align="L", top_margin=1.2, bottom_margin=0.6) as heading:
                    heading.write(block[3:])
                continue
            run_in = re.match(r"\*\*(.+?)\*\* ?(.*)", block)
            with columns.paragraph(text_align="J", first_line_indent=3) as paragraph:
                if run_in:
                    pdf.set_font("Times", "B", 9)
                    paragraph.write(run_in[1] + (" " if run_in[2] else ""))
                    block = run_in[2]
                pdf.set_font("Times", "", 9)
                paragraph.write(block)
    pdf.output(str(OUT))
    return OUT


def columns_of(path: Path) -> list[list[str]]:
    """Each page's body text column by column, from where pypdf finds each piece of text."""
    return [page_columns(page) for page in PdfReader(path).pages]


def page_columns(page: PageObject) -> list[str]:
    height = float(page.mediabox.height)
    left = MARGIN * 72 / 25.4
    column_width = (float(page.mediabox.width) - 2 * left) / COLUMNS
    found: list[list[str]] = [[] for _ in range(COLUMNS)]

    def visit(text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        x, y = tm[4] * cm[0] + cm[4], tm[5] * cm[3] + cm[5]
        if text.strip() and 40 < y < height - 45:  # the body, not the head or the stamp
            column = int((x - left) // column_width)
            found[min(max(column, 0), COLUMNS - 1)].append(text)

    page.extract_text(visitor_text=visit)
    return [" ".join(" ".join(pieces).split()) for pieces in found]


def sentences(text: str) -> list[str]:
    plain = [block.removeprefix("## ").replace("**", "") for block in blocks(text)]
    return [sentence for block in plain for sentence in re.split(r"(?<=[.;])\s+(?=[A-Z(])", block)]


def check(path: Path) -> None:
    pages = columns_of(path)
    assert len(pages) == 4, f"{len(pages)} pages, not 4: lengthen or shorten TEXT"
    assert sum(column.count(STS_SENTENCE) for page in pages for column in page) == 1
    assert any(STS_SENTENCE in column for column in pages[1]), "the STS sentence left page 2's columns"
    paragraph = next(block for block in blocks(TEXT) if STS_SENTENCE in block)
    head, tail = " ".join(paragraph.split()[:8]), " ".join(paragraph.split()[-8:])
    where = [[index for index, column in enumerate(pages[1]) if words in column] for words in (head, tail)]
    assert len(where[0]) == len(where[1]) == 1 and where[0] != where[1], "its paragraph must cross a column break"
    page_4 = " ".join(pages[3])
    assert all(re.search(rf"\b{word}\b", page_4) for word in ("STS", "provides", "automatic", "trim"))
    assert not re.search(r"STS provides|provides automatic|automatic trim", page_4)
    for number, page in enumerate(pages, 1):
        for left in range(COLUMNS - 1):
            for sentence in sentences(TEXT):
                whole = any(sentence in column for column in page)
                if not whole and sentence in page[left] + " " + page[left + 1]:
                    print(f"page {number}, column {left + 1} to {left + 2}: {sentence}")


TEXT = """
## DEPARTMENT OF TRANSPORTATION

## Federal Aviation Administration

## 14 CFR Part 39

[Docket No. FAA-2020-0321; Product Identifier 2019-NM-214-AD; Amendment 39-21187; AD 2020-16-07]

RIN 2120-AA64

## Airworthiness Directives; Corvane Aircraft Corporation Model CV-300 Airplanes

**AGENCY:** Federal Aviation Administration (FAA), Department of Transportation (DOT).

**ACTION:** Final rule.

**SUMMARY:** The FAA is adopting a new airworthiness directive (AD) for all Corvane Aircraft
Corporation Model CV-300 airplanes. This AD was prompted by reports of uncommanded movement of the
horizontal stabilizer while the airplane was being flown by hand, and by the finding that a worn
position sensor in the stabilizer trim system can send the trim computer a false reading. This AD
requires a one-time inspection of the stabilizer trim actuator and its two position sensors, the
replacement of worn sensors, a revision of the airplane flight manual, and a trim log to be kept
until the sensors of the affected part number are replaced. The FAA is issuing this AD to address
the unsafe condition on these products.

**DATES:** This AD is effective September 10, 2020.

The Director of the Federal Register approved the incorporation by reference of a certain
publication listed in this AD as of September 10, 2020.

**ADDRESSES:** For service information identified in this final rule, contact Corvane Aircraft
Corporation, Technical Publications, 1200 Runway Drive, Wichita Falls, TX 76305; telephone (940)
555-0142; email techpubs@corvane.example; internet www.corvane.example. You may view this service
information at the FAA, Airworthiness Products Section, Operational Safety Branch, in Des Moines,
Washington. For information on the availability of this material at the FAA, call (206) 555-0130.

**Examining the AD Docket**

You may examine the AD docket on the internet at www.regulations.gov by searching for and locating
Docket No. FAA-2020-0321; or in person at Docket Operations between 9 a.m. and 5 p.m., Monday
through Friday, except Federal holidays. The AD docket contains this final rule, the comments
received, the reports the FAA relied on in writing it, and other information. The street address
for Docket Operations is listed in the notice of proposed rulemaking.

**FOR FURTHER INFORMATION CONTACT:** Dana Whitcombe, Aerospace Engineer, Systems and Equipment
Section, FAA, Fort Worth ACO Branch; telephone (817) 555-0187; email dana.whitcombe@faa.example.

**SUPPLEMENTARY INFORMATION:**

## Background

The FAA issued a notice of proposed rulemaking (NPRM) to amend 14 CFR part 39 by adding an AD that
would apply to all Corvane Aircraft Corporation Model CV-300 airplanes. The NPRM published in the
Federal Register on March 12, 2020 (85 FR 14402). The NPRM was prompted by four reports, received
from three operators over a period of eleven months, of the horizontal stabilizer moving nose-down
by between one and two units of trim while the crew was flying the airplane by hand. In each case
the crew stopped the movement with the trim cutout switches on the center pedestal, and the
airplane landed without further incident.

In one of the four events the movement began in the climb at about 4,000 feet, shortly after the
crew had disconnected the autopilot to turn away from a line of storms. The first officer, who was
flying, needed both hands on the control column to hold the airplane level while the captain found
and set the cutout switches, and the airplane lost some 600 feet before it was back under control.
The crew said afterwards that the stabilizer position indicator moved so slowly that neither of
them noticed it until the column forces had become heavy.

The other three events were milder, but they followed the same pattern. Two happened in the
descent, within three minutes of the autopilot being disconnected for a visual approach, and the
third in level flight at 11,000 feet during a check flight after heavy maintenance. In all three
the stabilizer moved nose-down by about one unit of trim before the crew noticed the growing pull
on the column. In the two descents the crews first suspected a fault in the autopilot, which they
had just disconnected, and tried to engage it again before they used the cutout switches. On the
check flight the crew was testing the trim system on purpose and stopped the movement within a few
seconds, which is why that report gave the most complete record of what the system had done.

Flight data from three of the airplanes showed that the stabilizer had moved at a steady rate,
without any command from the trim switches, and that the amber STAB TRIM message had not been
shown at any point. The recorders on the fourth airplane had been overwritten before the operator
knew that the event mattered. The flight data also showed that the elevator was deflected up, to
oppose the stabilizer, for the whole time the stabilizer was moving, which is the opposite of what
the trim computer is designed to do. Corvane reproduced the behavior on its test rig by fitting a
sensor with an artificially worn track, and found that the rig followed the flight data closely.

Corvane's investigation found that, on each of the airplanes involved, one of the two position
sensors on the stabilizer trim actuator had a worn wiper track. A worn track can make the sensor
report a stabilizer position that differs from the real one by up to one and a half units of trim.
When the two sensors disagree by less than the monitoring threshold, the trim computer accepts the
average of the two readings, and it can then command the actuator to correct an error that does not
exist. The wear was found only on sensors having part number 27-4410-03, which were installed in
production on airplanes delivered between 2014 and 2018 and which were also supplied as spares.

Before the NPRM was issued, Corvane sent an All Operators Message, AOM-CV300-19-031, dated November
22, 2019, to every operator of the airplane. The message described the events, recommended that
crews be briefed on the use of the cutout switches, and asked operators to report any stabilizer
movement that the crew had not commanded. Several operators then checked sensors on their own
initiative during overnight maintenance. Of the 96 sensors they checked, seven showed a worn track,
and all seven had the part number identified below; none of the sensors of the later part number
showed any wear. The FAA has used these results, together with Corvane's own tests, in setting the
compliance times in this AD.

The NPRM proposed to require a one-time inspection of the actuator and of both sensors, the
replacement of any sensor with a worn track, a revision of the airplane flight manual (AFM), and a
trim log to be kept until every sensor having the affected part number has been replaced. This
condition, if not addressed, could result in uncommanded movement of the horizontal stabilizer
during manual flight, which, combined with a delayed crew response, could result in loss of control
of the airplane.

## Description of the Stabilizer Trim System

The Model CV-300 is a twin-engine regional jet that seats up to 76 passengers, with a T-tail and
a horizontal stabilizer whose angle can be changed in flight. Pitch is controlled in two ways. The
elevators, hinged to the back of the stabilizer, are moved by the control columns through cables
and two hydraulic actuators, and they give quick changes of pitch. The stabilizer itself moves
much more slowly, through a range of about sixteen units of trim, and it sets the pitch attitude
that the airplane will hold with no force on the columns. A pilot who lets the stabilizer run away
can still hold the airplane with the elevators, but the force needed grows with the speed and with
every unit of trim, and at high speed it can become more than one pilot can hold for long. For that
reason the stabilizer position is shown on a scale next to each pilot's primary flight display,
and a clacker sounds when the trim switches or the autopilot move the stabilizer for more than
three seconds at a time. It stays silent for the slower movements described below.

The stabilizer is moved by a single electromechanical actuator, a ball-screw jack driven by two motors,
installed in the tail cone just below the stabilizer pivot. The actuator is commanded in three ways:
by the pilots' trim switches on the control wheels, by the autopilot when it is engaged, and by the
stabilizer trim system (STS) when the autopilot is disengaged. The pilots' switches always take
priority over the other two.

When the autopilot is engaged, it trims the stabilizer itself whenever the elevator has been held
away from its neutral position for more than a few seconds, so that the airplane stays in trim and
the autopilot can be disconnected without a sudden change of pitch. When a pilot disconnects the
autopilot, with the button on the control wheel or by overpowering it, the trim computer hands the
stabilizer over to the STS within about one second. The crew is not told of this change. The design
assumed that the handover would go unnoticed, because the stabilizer should already be close to the
right position at that moment.

To know where the stabilizer is, the trim computer reads two position sensors mounted side by side
on the actuator housing. Each sensor is a rotary potentiometer driven through a small gear from the
ball screw, with a wiper that runs along a conductive plastic track. The computer compares the two
readings many times a second. If they differ by more than half a unit of trim for more than two
seconds, it stops the STS, shows an amber STAB TRIM message on the crew alerting display and leaves
the trim switches working. If they differ by less, it treats both readings as valid and uses their
average. The two sensors are identical and come from the same vendor, and each has its own
connector and wiring to the computer, so that a single wiring fault cannot affect both. They are
not part of any scheduled maintenance task, and are replaced only when the computer reports a
fault.

Of the three, the STS is the one that crews notice least. The STS provides automatic trim of the
horizontal stabilizer during manual flight. It compares the elevator position with the position that would
be needed for the airplane's speed, flap setting and weight, and moves the stabilizer slowly, at a
quarter of the rate of the pilots' switches, so that the column forces stay light as the airplane
accelerates, climbs or changes its flap setting. The system was added to the type design so that
the handling of the airplane would stay the same across its wide range of center of gravity
positions. It stops as soon as either pilot uses the trim switches, and it can be switched off with
the STS switch on the overhead panel or stopped altogether with the two trim cutout switches, which
remove power from both actuator motors.

The investigation showed why this design let the fault through. The wiper of an affected sensor
wears a shallow groove in the track at the position where the stabilizer spends most of its time
in cruise. In that groove the sensor reads low by a varying amount. Because the reading from the
good sensor is averaged with the reading from the worn one, the error that reaches the computer is
only half of the sensor's own error, and it usually stays under the monitoring threshold. The
computer therefore sees the stabilizer as further nose-up than it is, and it trims nose-down to
correct it, at the slow STS rate, for as long as the autopilot remains off.

The events all occurred within a few minutes of the autopilot being disconnected, when the STS took
over from the autopilot and the stabilizer left the worn part of the track. None of the crews had
been trained to expect the STS to move the stabilizer against their inputs, and in the simulator
sessions that Corvane ran after the second event, pilots took between 9 and 40 seconds to identify
the problem and set the cutout switches. Corvane has since changed the training material and is
developing new trim computer software with a tighter threshold, which the FAA may consider for
further rulemaking.

## Comments

The FAA gave the public the opportunity to participate in developing this final rule. The FAA
received comments from five commenters: the Regional Airline Pilots Council (RAPC), Northwind
Regional Airlines, Lakeshore Connection, Corvane, and an individual. The following presents the
comments received on the NPRM and the FAA's response to each comment.

## Request To Extend the Compliance Time

Northwind Regional Airlines asked that the compliance time for the inspection be extended from
650 flight hours to 1,200 flight hours, so that the inspection could be done during the next
scheduled heavy maintenance check. Northwind said that reaching the actuator means removing two
tail cone access panels and the stabilizer fairing, which takes a full shift on an airplane that
is otherwise in daily service, and that its fleet of 31 airplanes would need to be taken out of the
schedule one at a time to meet the proposed time.

The FAA does not agree. The four events happened on airplanes that had between 2,100 and 3,400
flight hours since their sensors were installed, and the data Corvane gave the FAA do not show a
wear rate that would justify waiting for a heavy check that may be as much as 4,000 flight hours
away. In developing the compliance time, the FAA took into account the urgency of the unsafe
condition, the availability of parts, and the practical need to schedule the inspection during
regular maintenance. The FAA has determined that 650 flight hours, which is about four months of
operation for most operators, strikes the right balance. An operator may request approval of an
alternative method of compliance (AMOC) under the provisions of paragraph (m) of this AD if it can
show that a different time provides an acceptable level of safety. The FAA has not changed this
AD in this regard.

## Request To Remove the Trim Log Requirement

Lakeshore Connection asked that the trim log be removed from the AD. It said that the log adds
work for flight crews at the end of every flight, that crews already report unusual events in the
aircraft maintenance log, and that the inspection required by paragraph (g) of this AD is enough to
find the worn sensors. The FAA partly agrees. The purpose of the log is to catch a sensor that
begins to wear after the inspection and before it is replaced, so the FAA has not removed the log.
The FAA agrees, however, that a separate entry for every flight is not needed, and has changed
paragraph (j) of this AD so that crews record only flights on which the stabilizer moved without a
command from the trim switches or the STAB TRIM message was shown. Operators may keep the log in
the aircraft maintenance log, as Lakeshore suggested, if the entries can be found and counted.

## Request To Require Replacement of All Affected Sensors

The RAPC asked that the AD require every sensor having part number 27-4410-03 to be replaced within
the compliance time, whether or not it shows wear. The RAPC said that an inspection can only show
the state of a track on the day it is done, and that pilots should not be asked to remain the last
line of defense against a fault that is already understood. The FAA agrees that replacing all
affected sensors would end the unsafe condition, and that is the reason this AD prohibits the
installation of those sensors and requires their replacement within 6,000 flight hours. But
Corvane has told the FAA that it can supply only about 40 new sensors a month until early 2021,
and an AD that required replacement of all 424 sensors in the U.S. fleet within 650 flight hours
would ground a large part of that fleet without a corresponding gain in safety. The inspection,
the AFM revision and the trim log together address the unsafe condition until the replacement is
done. Corvane expects to supply twice as many sensors a month from the first quarter of 2021. The
FAA has not changed this AD in this regard.

## Request To Allow Dispatch With the STS Switched Off

Northwind Regional Airlines also asked whether an airplane could be operated with the STS switch
selected off, instead of keeping the trim log, until its sensors are replaced. Northwind said that
its pilots would rather trim the airplane themselves than fly with a system they had been told
might move the stabilizer against them. The FAA does not agree that this should be allowed as a
general alternative. Flying with the STS off is allowed by the master minimum equipment list for a
limited number of days, and the handling qualities with the system off were accepted on that basis,
not for months of operation. The flight test data show heavier column forces during flap changes and
in turbulence, and the workload in a single-pilot failure case was not assessed. An operator may
request an AMOC under paragraph (m) of this AD if it can provide data to support longer operation.

## Request To Change the Applicability

Lakeshore Connection asked that the applicability be limited to airplanes on which sensors having
part number 27-4410-03 are installed, since airplanes delivered after 2018 had the later part number
from production. The FAA does not agree. Sensors having the affected part number were supplied as
spares until March 2020 and may have been installed on any airplane during maintenance, so the
records of an airplane's delivery do not show which sensors it now has. An operator that can show
from its maintenance records that an airplane has only sensors having the later part number may
treat the inspection in paragraph (g) of this AD as already done, as allowed by paragraph (f).

## Request To Clarify the AFM Revision

Corvane asked that the FAA refer to the latest revision of its AFM procedure in paragraph (i) of
this AD, and noted that the revision now includes a memory item for the trim cutout switches. The
FAA agrees and has changed paragraph (i) of this AD to refer to Corvane CV-300 AFM Temporary Revision
TR-27-14, Revision 1, dated May 18, 2020. An operator that has already inserted the original issue
of the temporary revision must insert Revision 1 within 30 days after the effective date of this AD.

## Comment on the Cause of the Wear

An individual commenter said that the wear was caused by vibration of the tail cone rather than by
the sensor design, and that the FAA should require a structural inspection of the sensor brackets.
Corvane's analysis, which is in the docket, found the brackets within their design limits on all
four airplanes, and the wear pattern matches the position of the stabilizer in cruise rather than
the natural frequencies of the tail cone. The FAA has therefore not added a bracket inspection to
this AD, but will consider further action if new information becomes available.

## Conclusion

The FAA reviewed the relevant data, considered the comments received, and determined that air
safety requires adopting this AD with the changes described previously. Except for minor editorial
changes and the changes described above, this AD is adopted as proposed in the NPRM. None of the
changes increase the economic burden on any operator.

## Related Service Information Under 1 CFR Part 51

The FAA reviewed Corvane Service Bulletin CV300-27-0112, Revision 1, dated April 24, 2020. The
service information describes procedures for a detailed visual inspection of the stabilizer trim
actuator, a resistance sweep of each position sensor across its full travel, and the replacement of
a sensor whose sweep shows a step, a flat region or noise above the stated limits. This service
information is reasonably available because the interested parties have access to it through their
normal course of business or by the means identified in the ADDRESSES section.

## Costs of Compliance

The FAA estimates that this AD affects 212 airplanes of U.S. registry. The inspection takes about 6
work-hours per airplane at $85 per work-hour, or $510 per airplane and $108,120 for the U.S. fleet.
Inserting the AFM revision takes about 1 work-hour, or $85 per airplane. The FAA estimates that
keeping the trim log costs about $40 per airplane per year in crew and maintenance time. Replacing a
sensor takes about 4 work-hours and parts cost about $3,850, or $4,190 per sensor. The FAA has no
way of knowing how many sensors will be found worn before their scheduled replacement.

## Authority for This Rulemaking

Title 49 of the United States Code gives the FAA its authority to issue rules on aviation safety,
and the Administrator's authority under it is delegated in turn to the divisions that write
airworthiness directives. This AD is issued under that authority because it addresses an unsafe
condition that is likely to exist or develop on products of the same type design.

## Regulatory Findings

This AD will not have federalism implications, because it will not have a substantial direct
effect on the States, on the relationship between the national government and the States, or on
the distribution of power among the various levels of government. For the reasons discussed above,
the FAA certifies that this AD is not a significant regulatory action, will not affect intrastate
aviation in Alaska, and will not have a significant economic impact on a substantial number of
small entities.

## List of Subjects in 14 CFR Part 39

Air transportation, Aircraft, Aviation safety, Incorporation by reference, Safety.

## Adoption of the Amendment

Accordingly, under the authority delegated to it by the Administrator, the FAA amends 14 CFR part
39 as follows:

## PART 39 - AIRWORTHINESS DIRECTIVES

1. The authority citation for part 39 continues to read as follows: Authority: 49 U.S.C. 106(g),
40113, 44701.

## § 39.13 [Amended]

2. The FAA amends § 39.13 by adding the following new airworthiness directive:

2020-16-07 Corvane Aircraft Corporation: Amendment 39-21187; Docket No. FAA-2020-0321; Product
Identifier 2019-NM-214-AD.

## (a) Effective Date

This airworthiness directive (AD) is effective September 10, 2020.

## (b) Affected ADs

None.

## (c) Applicability

This AD applies to all Corvane Aircraft Corporation Model CV-300 airplanes, certificated in any
category.

## (d) Subject

Air Transport Association (ATA) of America Code 27, Flight controls.

## (e) Unsafe Condition

This AD was prompted by reports of uncommanded nose-down movement of the horizontal stabilizer
during manual flight, and by the finding that a worn track in a stabilizer position sensor can give
the trim computer a false reading that stays below its monitoring threshold. The FAA is issuing
this AD to detect and correct worn sensors, and to make sure that flight crews recognize and stop
uncommanded stabilizer movement promptly. The unsafe condition, if not addressed, could result in
loss of control of the airplane.

## (f) Compliance

Comply with this AD within the compliance times specified, unless already done.

## (g) Inspection of the STS Actuator and Position Sensors

Within 650 flight hours after the effective date of this AD, do a detailed visual inspection of
the STS actuator and a resistance sweep of both position sensors, in accordance with the
Accomplishment Instructions of Corvane Service Bulletin CV300-27-0112, Revision 1, dated April 24,
2020. The sweep is done with the actuator driven through its full travel by the trim switches,
with the autopilot and the STS both switched off. If any sensor shows a step, a flat region or
noise above the limits given in the service bulletin, do the actions in paragraph (h) of this AD
before further flight.

## (h) Replacement of Worn Sensors

If any sensor fails the sweep required by paragraph (g) of this AD, replace both sensors on that
actuator with sensors having part number 27-4410-05, and do an operational test of the STS, in
accordance with the Accomplishment Instructions of the service bulletin, before further flight.
Both sensors are replaced together because the computer averages their readings, and a new sensor
paired with a worn one would leave half of the error in place.

## (i) Airplane Flight Manual Revision

Within 30 days after the effective date of this AD, revise the Normal Procedures and the Abnormal
Procedures sections of the Corvane CV-300 AFM by inserting a copy of Temporary Revision TR-27-14,
Revision 1, dated May 18, 2020. The temporary revision adds a check of the stabilizer position
indicator during the first two minutes after any automatic pilot disconnect, and a memory item for
setting both trim cutout switches when the stabilizer moves without a command. Crews must be told
of the revision before their next flight.

## (j) Trim Log

From the effective date of this AD until both sensors on the airplane have been replaced as
specified in paragraph (h) or (k) of this AD, the operator keeps a trim log for each airplane. The
operator provides a trim log entry form to each flight crew and makes sure that, after any flight
on which the stabilizer moved without a command from the trim switches, or on which the STAB TRIM
message was shown, the crew records the date, the flight phase, the altitude, and whether the STS
switch or the cutout switches were used. Within 10 flight hours after any such entry, the STS
actuator of that airplane must be inspected as specified in paragraph (g) of this AD.

## (k) Terminating Action

Replacing both sensors on an airplane with sensors having part number 27-4410-05, in accordance
with the Accomplishment Instructions of the service bulletin, terminates the inspection and the
trim log required by paragraphs (g) and (j) of this AD for that airplane. Within 6,000 flight hours
after the effective date of this AD, replace every sensor having part number 27-4410-03.

## (l) Parts Installation Prohibition

As of the effective date of this AD, no person may install a stabilizer position sensor having part
number 27-4410-03 on any airplane, and no person may install a trim computer software version
earlier than the one identified in the service bulletin.

## (m) Alternative Methods of Compliance (AMOCs)

(1) The Manager, Fort Worth ACO Branch, FAA, has the authority to approve AMOCs for this AD, if
requested. Send your request to your principal inspector or local Flight Standards District Office,
as appropriate, and send information to the person identified in paragraph (p) of this AD. Before
using any approved AMOC, notify your appropriate principal inspector, or lacking a principal
inspector, the manager of the local flight standards district office.

(2) An AMOC that allows the STS to be switched off for longer than the master minimum equipment list
allows must include flight test data for flap changes, go-arounds and flight in moderate turbulence,
and a training plan for the crews who will fly the airplane in that condition.

(3) For any requirement in this AD to obtain instructions from a manufacturer, the instructions
must be accomplished using a method approved by the Manager, Fort Worth ACO Branch, FAA.

## (n) Reporting

Within 10 days after each inspection required by paragraph (g) of this AD, or within 10 days after
the effective date of this AD, whichever occurs later, report the results of the resistance sweep of
each sensor, including sweeps that found no wear, to Corvane Customer Support, 1200 Runway Drive,
Wichita Falls, TX 76305; email support@corvane.example. The report must include the airplane serial number, the
sensor serial numbers, the flight hours on each sensor and, for a sensor that failed the sweep, the
position on the track at which the fault was found. Corvane will use these reports to find out
whether the wear depends on the flight hours alone or also on the routes an airplane flies.

## (o) Paperwork Reduction Act Burden Statement

The collection of information in paragraph (n) of this AD is estimated to take about 1 hour for
each report, including the time for reviewing instructions, completing and reviewing the report,
and sending it. No person is required to respond to a collection of information that does not
display a currently valid control number. Comments on the time estimate may be sent to the person
identified in paragraph (p) of this AD.

## (p) Related Information

For more information about this AD, contact Dana Whitcombe, Aerospace Engineer, Systems and
Equipment Section, FAA, Fort Worth ACO Branch; telephone (817) 555-0187; email
dana.whitcombe@faa.example.

## (q) Material Incorporated by Reference

The Director of the Federal Register approved the incorporation by reference of Corvane Service
Bulletin CV300-27-0112, Revision 1, dated April 24, 2020, and Corvane CV-300 AFM Temporary Revision
TR-27-14, Revision 1, dated May 18, 2020. You must use this service information as applicable to do
the actions required by this AD, unless this AD specifies otherwise.

Issued on July 29, 2020.

Martha J. Ellery, Deputy Director for Regulatory Operations, Compliance and Airworthiness Division,
Aircraft Certification Service.

[FR Doc. 2020-17140 Filed 8-5-20; 8:45 am]

BILLING CODE 4910-13-P
"""


def main() -> None:
    path = render()
    check(path)
    print(path)


if __name__ == "__main__":
    main()
