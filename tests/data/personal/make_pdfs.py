"""Writes the two PDFs of the personal retrieval set: pdfs/riverside-tenancy-agreement.pdf and
pdfs/eastville-harriers-newsletter.pdf.

Every page carries a running header line and a footer with the document's reference and
"Page N of M", so that a PDF reader has to cope with text repeated on every page. Only the core
fonts (Helvetica, Times) and Latin-1 text are used, so that pypdf extracts the text exactly.
In the texts below a blank line separates paragraphs and "## " starts a section heading.

# fpdf2 is not a project dependency: python3 -m venv /tmp/pdfgen && /tmp/pdfgen/bin/pip install fpdf2 && /tmp/pdfgen/bin/python make_pdfs.py
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

HERE = Path(__file__).resolve().parent
BST = dt.timezone(dt.timedelta(hours=1))


@dataclass(frozen=True)
class Document:
    filename: str
    title: str
    running_header: str
    reference: str
    author: str
    created: dt.datetime
    text: str


class RunningPdf(FPDF):
    """An A4 page with a running header line and a "Page N of M" footer on every page."""

    def __init__(self, running_header: str, reference: str) -> None:
        super().__init__(orientation="portrait", unit="mm", format="A4")
        self.running_header = running_header
        self.reference = reference
        self.set_margins(left=25, top=24, right=25)
        self.set_auto_page_break(auto=True, margin=24)

    def header(self) -> None:
        self.set_y(10)
        self.set_font("Helvetica", "I", 8.5)
        self.set_text_color(90, 90, 90)
        self.cell(0, 5, self.running_header, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.set_draw_color(160, 160, 160)
        self.line(self.l_margin, 16, self.w - self.r_margin, 16)
        self.set_text_color(0, 0, 0)
        self.set_y(24)

    def footer(self) -> None:
        self.set_y(-16)
        self.set_font("Helvetica", "", 8.5)
        self.set_text_color(90, 90, 90)
        page = f"Page {self.page_no()} of {{nb}}"
        self.cell(0, 5, f"{self.reference}    {page}", align="C")
        self.set_text_color(0, 0, 0)


def blocks(text: str) -> list[str]:
    """The paragraphs and headings of a text, each joined into one line."""
    return [" ".join(block.split()) for block in text.strip().split("\n\n")]


def render(doc: Document) -> Path:
    pdf = RunningPdf(doc.running_header, doc.reference)
    pdf.set_title(doc.title)
    pdf.set_author(doc.author)
    pdf.set_creator("make_pdfs.py (fpdf2)")
    pdf.set_creation_date(doc.created)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 8, doc.title, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(3)
    for block in blocks(doc.text):
        block.encode("latin-1")  # core fonts only: fail here rather than in the PDF
        if block.startswith("## "):
            if pdf.get_y() > pdf.h - 50:
                pdf.add_page()
            pdf.ln(2)
            pdf.set_font("Helvetica", "B", 11.5)
            pdf.multi_cell(0, 6, block[3:], new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(1)
        else:
            pdf.set_font("Times", "", 12)
            pdf.multi_cell(0, 6.2, block, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(2.2)
    out = HERE / "pdfs" / doc.filename
    out.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(out))
    return out


TENANCY = Document(
    filename="riverside-tenancy-agreement.pdf",
    title="Assured Shorthold Tenancy Agreement: Flat 12, Riverside Court",
    running_header="Riverside Court Tenancy Agreement - Draft v3 - not for signature",
    reference="Ref HL/RC12/2026",
    author="Harbour Lettings Ltd",
    created=dt.datetime(2026, 10, 16, 11, 5, tzinfo=BST),
    text="""
This is the third draft of the agreement, sent to the tenant for comments. Changes from draft v2
are the start date, the wording of the break clause and the house rules in section 9. Please
send any comments or questions to Chloe Marsh at Harbour Lettings by 30 October 2026, after
which the final version will be issued for signing on the day the keys are collected.

## 1. The parties

This agreement is made between Mr Graham Whitfield of 3 Cotham Vale, Bristol (the Landlord),
acting through his managing agent Harbour Lettings Ltd, 14 Welsh Back, Bristol BS1 4SP (the
Agent), and Mr Femi Okafor (the Tenant). Where this agreement says that the Landlord will do
something, the Agent may do it on his behalf, and notices given to the Agent count as notices
given to the Landlord.

If more than one person signs as tenant, each of them is responsible for the whole of the rent
and for keeping to every term of this agreement, not just for a share of it.

## 2. The property

The property is Flat 12, Riverside Court, Feeder Road, Bristol BS2 0TB, a one-bedroom flat on
the second floor, let furnished as described in the inventory. The Tenant may also use the
communal entrance hall and stairs, the courtyard bin store and one space in the basement cycle
store. No car parking space is included in the let, and the visitor bays at the front of the
building are for short stays of up to two hours only.

The inventory and schedule of condition, with dated photographs, forms part of this agreement.
The Tenant should check it on the day of moving in and return it with any comments within seven
days; anything not commented on in that time will be taken as correct.

## 3. The term

The tenancy is an assured shorthold tenancy for a fixed term of twelve months beginning on 14
November 2026 and ending on 13 November 2027. If nobody gives notice, it will then continue from
month to month on the same terms.

Break clause: either party may end the tenancy at any time after the first six months by giving
the other not less than two months' notice in writing, so that the earliest date on which the
tenancy can end under this clause is 14 May 2027. Notice from the Tenant should be sent to the
Agent by email or by post and is effective from the day it is received.

## 4. Rent

The rent is £1,150 per calendar month, payable in advance. The first payment is due on or before
the start date and covers the period to 13 December 2026; after that the rent is due on the 14th
day of each month, by standing order to the client account of the Agent given in Schedule 2.

If any rent is more than fourteen days late, the Landlord may charge interest on the late amount
at 3% above the Bank of England base rate, from the day it was due until the day it is paid. No
other charge is made for late payment. The rent will not be increased during the fixed term;
after it, any increase will be proposed with at least one month's written notice and not more
than once a year.

## 5. The deposit

The Tenant pays a deposit of £1,326, equal to five weeks' rent, before the start date. The
Landlord will protect it with the Deposit Protection Service (DPS) within 30 days of receiving
it and will give the Tenant the prescribed information, including the scheme's details and how
to use its free dispute service.

At the end of the tenancy the deposit is returned within ten days of the parties agreeing the
amount, less any deductions for unpaid rent or bills, damage beyond fair wear and tear, missing
items from the inventory, or cleaning needed to bring the flat back to the standard recorded at
the start. The Landlord will set out any proposed deduction in writing with evidence such as
photographs, quotes or invoices.

## 6. Bills, council tax and the service charge

The Tenant pays for gas, electricity, water and sewerage, council tax (the flat is in Band B),
the TV licence if needed, and any telephone or broadband service, from the start date until the
tenancy ends. The Tenant should take meter readings on the day of moving in and tell each
supplier. The Tenant may change energy supplier but must tell the Agent and must leave a working
standard meter in place; a prepayment meter may not be installed without the Landlord's consent.

The building service charge, the buildings insurance and the cleaning of the communal areas are
paid by the Landlord and are included in the rent. The Tenant is advised to take out contents
insurance, as the Landlord's insurance does not cover the Tenant's own belongings.

## 7. Repairs and reporting problems

The Landlord is responsible for the structure and exterior of the flat, for the supply of water,
gas and electricity, and for the heating and hot water. The flat is heated by a gas combi
boiler, which the Landlord has serviced every year; the current Gas Safety certificate is dated
2 September 2026 and the Electrical Installation Condition Report is valid until 2029.

The Tenant should report repairs through the Agent's online repairs portal as soon as they are
noticed, with photographs where possible. Routine repairs will normally be attended to within 14
days. In an emergency, which means no heating or hot water between October and April, a major
leak, no electricity, a blocked toilet where there is only one, or a door or window that cannot
be secured, the Tenant should telephone the 24-hour emergency line on 0117 496 0999, and the
Landlord aims to have someone attend within 24 hours.

The Tenant looks after the small things: replacing light bulbs and fuses, testing the smoke
alarm and the carbon monoxide alarm once a month, bleeding radiators, keeping sinks and drains
clear, and reporting any damp or mould promptly. Condensation should be kept down by using the
extractor fans, opening the trickle vents and drying washing in the drying area rather than on
the radiators.

## 8. Access and inspections

The Landlord or the Agent may enter the flat at reasonable times to inspect it or to carry out
repairs, after giving the Tenant at least 24 hours' written notice, except in an emergency.
Inspections will be made every three months in the first year, the first one in February 2027,
and every six months after that. The Tenant is welcome to be present and a short written report
will be sent after each visit.

In the last two months of the tenancy the Agent may show the flat to prospective tenants, again
with 24 hours' notice, and will try to group viewings together to limit disruption.

## 9. House rules for Riverside Court

Riverside Court has twenty-four flats, and these rules are there so that everyone can live
comfortably together. They apply to the Tenant and to the Tenant's visitors.

Noise: please keep noise down between 11pm and 7am, including music, televisions and washing
machines. Parties that are likely to disturb neighbours need the Agent's agreement in advance.

Smoking: smoking and vaping are not allowed anywhere in the building, including the flats, the
balconies, the stairs and the courtyard. Barbecues are not permitted on balconies.

Bicycles: bikes must be kept in the basement cycle store, not in the hallways, on the stairs or
on balconies, as these are fire escape routes that must be kept clear. The store is opened with
the same fob as the front door.

Rubbish: general waste is collected on Tuesday morning and recycling on alternate Thursdays.
Please use the courtyard bin store and do not leave bags beside the bins, as this attracts foxes
and gulls. Bulky items such as furniture must be taken away by the Tenant and not left in the
bin store.

Pets: no pets may be kept without the Landlord's written consent, which will not be refused
without good reason. Fish in a tank of under 60 litres do not need consent.

Guests: the Tenant may have guests to stay, but nobody else may live at the flat, and guests
should not stay for more than fourteen nights in any three month period without the Agent being
told.

Security: the communal front door must not be propped open, and parcels left in the entrance
hall should be collected the same day. Washing must not be hung over the balcony railings.

## 10. Decoration and alterations

The Tenant may not paint or wallpaper, change the locks, or make any alterations without the
Landlord's written consent. To make the flat feel like home, the Tenant may put up to six small
picture hooks in the living room and bedroom walls, and any holes will be treated as fair wear
and tear. Please do not use Blu Tack or adhesive tape on painted walls; removable adhesive
strips are fine if they are taken off carefully.

## 11. Ending the tenancy

On the last day the Tenant must leave the flat clean, to the standard recorded in the inventory,
with all personal belongings and rubbish removed. A professional clean is not required, but the
oven, the fridge and the bathroom are the areas most often disputed. The Agent will carry out a
check-out inspection against the inventory, and the Tenant is welcome to attend it.

All keys must be returned to the Agent's office by 12 noon on the last day: two front door keys,
one communal fob and one post box key. A lost fob costs £35 to replace and a lost key is charged
at the locksmith's actual cost. The Tenant should give a forwarding address so that the deposit
and any post can be sent on.

## 12. Notices and signatures

Notices under this agreement may be given by email to the address the Tenant gives the Agent, as
well as by post or by hand. The Landlord's address for service is care of the Agent, Harbour
Lettings Ltd, 14 Welsh Back, Bristol BS1 4SP.

This draft is for discussion and is not to be signed. Schedule 1 (the inventory) and Schedule 2
(payment details) will be attached to the final version.
""",
)


NEWSLETTER = Document(
    filename="eastville-harriers-newsletter.pdf",
    title="Eastville Harriers Autumn Newsletter",
    running_header="Eastville Harriers Running Club - Autumn Newsletter 2026 - Issue 47",
    reference="EH/NL/47",
    author="Eastville Harriers newsletter team",
    created=dt.datetime(2026, 10, 19, 20, 30, tzinfo=BST),
    text="""
Welcome to the autumn issue. Inside: a word from the chair, race results, the Bath Half plans,
changes to Tuesday track nights, the winter kit order, the AGM and the Christmas social. Thank
you to everyone who sent in photos and race reports; sorry to those we could not fit in.

## From the chair

What a summer. We now have 214 members, the most in the club's history, and the Thursday social
run regularly has more than forty people setting off from the Eastville Park car park. A lot of
that is down to the run leaders who turn up in all weathers, and to the members who bring their
friends along. Please keep doing it.

The committee has had a busy few months. We have finally bought a new club gazebo, replaced the
first aid kits, and agreed a new arrangement for Tuesday track sessions, which you can read
about below. After nine years as treasurer, Dave Lloyd has told us he will be stepping down at
the AGM. Dave has kept the club's books in better shape than most small businesses, and we owe
him a great deal. If you think you could take on the role, talk to him or to me before the AGM.

See you on the trails. Rob Tennant, Chair

## Race round-up

Bristol 10k, 13 September: a warm morning and a big club turnout of 31 Harriers. First club
woman was Leila Haddad in 41:12, a big improvement on last year, and first club man was Tomasz
Nowak in 35:48. Special mention to Sam Whitlock, who finally broke forty minutes with 39:58
after three years of trying, and celebrated appropriately.

Cross country: the first fixture of the Gloucestershire league was at Blaise Castle on 10
October, in proper mud. The women's team finished second on the day and the men fourth, and our
under 13s came home with two individual medals. The next fixture is on 7 November at Lydiard
Park in Swindon. The club minibus leaves from the Eastville Park car park at 10:15, and there
are eleven seats left; put your name on the list at Thursday club night.

Parkrun milestones: congratulations to Peggy Doyle, who ran her 250th parkrun at Ashton Court in
September at the age of 71 and was given a guard of honour by the volunteers. Peggy says the
secret is never running faster than you can chat. Well done too to the four members who reached
their 50th this autumn.

## Bath Half, Sunday 15 November

Thirty-eight Harriers have places for the Bath Half this year, our biggest group yet. The club
coach is now full. If you are going by train, the 07:42 from Temple Meads gets into Bath Spa at
08:00, which leaves plenty of time for the bag drop, but it will be busy, so consider an earlier
one.

For the team photo we will meet at the club flag by the Holburne Museum at 9:15, whatever your
start wave. Please wear club colours so we can find each other. After the race, the club has
reserved the upstairs room at The Raven on Queen Street from 1pm, where there will be food and a
chance to swap stories.

A word from the coaches: the first three miles are downhill and flat, and it is very easy to go
off too fast with the crowd. Run the first 5k at or a little slower than your goal pace and save
something for the climb at mile eleven.

## Tuesday track nights are moving

From 3 November, Tuesday track sessions move from Whitchurch to the SGS Stoke Gifford track,
starting at 7pm. The new track is floodlit, easier to reach for most members, and has changing
rooms and a cafe. The track charges a fee of £3 per person per session, which can be paid by
card at the gate; the club pays the booking for the lanes.

Sessions will be coached by Mark Evans and Priti Shah, with groups for every pace. New members
are very welcome; you do not need to be fast to do intervals, only to be willing to suffer a
little.

## Winter kit order

The winter kit order is open until 20 November. This year's range includes the new club jacket,
a lightweight waterproof in navy with the red chevron, at £42, and the long sleeve technical top
at £24. Hats and buffs are £10 each. Sample sizes will be at the Thursday runs for the next
three weeks so that you can try before you order. Orders are placed through the form on the
members' page and paid by bank transfer, and the kit should arrive in mid December, just in time
for Christmas.

## Annual General Meeting

The AGM will be held on Thursday 26 November 2026, 7:30pm, upstairs at The Plough in Easton.
There will be a short social run beforehand for anyone who wants it, leaving the pub at 6:45.
The agenda covers the chair's report, the accounts, the election of officers and committee, and
any proposals from members.

Nominations for the committee must reach the secretary, Helen Gray, by 12 November, with a
proposer and a seconder. The posts open this year are treasurer and social secretary. Proposals
for the AGM need to be sent by the same date.

Treasurer's summary: the club's funds stood at £6,870 at the end of September. The main spending
this year was the gazebo, the first aid kits and the England Athletics affiliation fees. The
budget for next year includes funding for two more members to train as run leaders.

## Membership fees

The England Athletics affiliation fee has gone up to £21 per member this year. The committee has
decided not to pass this on: the annual fee stays at £35 for adults and £20 for students, under
18s and over 65s. Renewals are due on 1 April as usual.

## Coaching and run leaders

Congratulations to Sam Whitlock and Priti Shah, who have both qualified as Leaders in Running
Fitness. The club will fund two more places on the course next year. If you are interested,
please contact our coaching coordinator, Mark Evans, before the end of December.

Our next beginners' course, Couch to 5k, starts on Monday 11 January and has twelve places. It
fills up fast, so if you have a friend or neighbour who has been meaning to start, tell them
now.

## Route of the month: the Frome Valley loop

This month's route was sent in by Leila Haddad and is a favourite for Sunday long runs. From the
Eastville Park car park, follow the river upstream past the lake and under the motorway to Snuff
Mills, carry on along the Frome Valley Walkway to Frenchay, cross the river at the old mill
bridge and come back on the other bank through Oldbury Court. It is about 14 kilometres there
and back, mostly on trails, with one short steep climb out of Frenchay that Leila calls the
wall.

The paths are muddy from October to April and the stepping stones at Snuff Mills are slippery
when the river is high, so use the footbridge. There is a water tap at the Snuff Mills cafe,
which is open from 9am at weekends, and toilets at Oldbury Court.

## Volunteers needed

Our own race, the Eastville Eight, returns on Sunday 21 March 2027, and we need about sixty
marshals to make it happen. Every member who marshals gets a free place in a club race of their
choice the following year. The volunteer coordinator is Jo Fenwick, who will be collecting names
from January.

We are also asked to help at Eastville parkrun on the first Saturday of each month, when the
club takes over the volunteer roster. Timekeeping, token sorting and tail walking all need
people, and no experience is required. The December takeover is on 5 December.

## Junior section

The junior section for 11 to 16 year olds now meets on Wednesdays from 6pm to 7pm at the SGS
Stoke Gifford track, led by Priti Shah and two parent volunteers. There are currently twenty-two
juniors and a short waiting list. Parents must stay on site for the under 13s. Junior membership
is £15 a year, which includes a club vest.

## Running in the dark

The clocks have gone back and most of our evening runs now finish in the dark. Please wear
something bright or reflective and carry a light, especially on the railway path and around the
lake. The club has six head torches that members can borrow; ask a run leader at the start of
club night. Run in groups, and if you leave a group early, tell the leader.

## Christmas social

The Christmas social is on Saturday 12 December at The Old Market Assembly, from 7pm until late.
Tickets are £18 and include food and a DJ, and the club awards will be presented, including Most
Improved Runner and Clubperson of the Year. Nominations for the awards can be made to the social
team until 1 December. Tickets are on sale at Thursday club night or from the members' page.

That's all for this issue. Send your news, race reports and photos for the winter issue to the
newsletter team by 15 January.
""",
)


def main() -> None:
    for doc in (TENANCY, NEWSLETTER):
        print(render(doc))


if __name__ == "__main__":
    main()
