"""Whether a word of a note says a noun of the question: the same thing, or a kind of it (WordNet's nouns).

"What medication did the doctor put me on?" asked of a note that says "rx naproxen 500mg": naproxen is
a kind of medication, so the note speaks of the question's medication. "Which tooth is the dentist
going to look at?" — a molar is a tooth. "What's wrong with the upstairs loo?" — a loo is a toilet.
But a grandma is not a grandpa, a turtle not a snake, a zoo not an aquarium: words of the same
family that are not the same thing, which word vectors put as close together as synonyms (MiniLM:
mechanic–technician 0.58, dog–cat 0.66). WordNet tells the two apart by its relations:

- the same synset (synonyms: "sofa" / "couch");
- the note's word is a kind of the question's, at any depth ("naproxen" → NSAID → … → medication);
- the question's word is a kind of the note's, one step up only ("loo" → toilet): a note that says
  only "reptile" does not say "snake".

Only nouns count: verbs' relations are loose ("rule" is a way to "declare"), and the words people
paraphrase in a question are things. Only a word's usual senses count: those tagged in WordNet's
sense-tagged texts, or all of them when none is ("queen" is also a king.n.02, "a competitor who holds a
preeminent position", never tagged so). The table is derived from WordNet 3.0 (Princeton University, the WordNet 3.0 licence in
`wordnet_LICENSE`) by `python -m chat.kinds build /usr/share/wordnet` (Debian's `wordnet-base`).

The same table holds each adjective's opposites (`opposites`, for `chat.checks.opposite`): the antonyms of
its usual senses with the words of their clusters — "slow" is the opposite of "fast" and of its satellite
"rapid".
"""

from __future__ import annotations

import functools
import gzip
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).with_name("wordnet_kinds.txt.gz")

# WordNet's rules for a noun's singular (morphy), after its exception list ("teeth" → "tooth").
_ENDINGS = (
    ("s", ""),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
)
_POINTERS = {"@", "@i"}  # hypernym, instance hypernym


@dataclass(frozen=True)
class _Table:
    senses: dict[str, tuple[int, ...]]  # a word's usual synsets
    parents: dict[int, tuple[int, ...]]  # a synset's hypernyms
    bases: dict[str, tuple[str, ...]]  # irregular forms: "teeth" → ("tooth",)
    opposites: dict[str, tuple[str, ...]]  # an adjective's antonyms: "slow" → ("fast", "rapid", …)


@functools.cache
def _table() -> _Table:
    senses: dict[str, tuple[int, ...]] = {}
    parents: dict[int, tuple[int, ...]] = {}
    bases: dict[str, tuple[str, ...]] = {}
    opposites: dict[str, tuple[str, ...]] = {}
    with gzip.open(TABLE, "rt", encoding="utf-8") as lines:
        for line in lines:
            kind, key, values = line.rstrip("\n").split("\t")
            if kind == "w":
                senses[key] = tuple(int(value) for value in values.split(","))
            elif kind == "p":
                parents[int(key)] = tuple(int(value) for value in values.split(","))
            elif kind == "x":
                bases[key] = tuple(values.split(","))
            elif kind == "o":
                opposites[key] = tuple(values.split(","))
    return _Table(senses, parents, bases, opposites)


@functools.lru_cache(maxsize=65536)
def _senses(word: str) -> frozenset[int]:
    """The usual synsets of `word` in any of its forms ("molars", "teeth", "prescribed")."""
    table = _table()
    word = word.lower()
    forms = {word, *table.bases.get(word, ())}
    forms.update(word[: -len(ending)] + base for ending, base in _ENDINGS if word.endswith(ending))
    return frozenset(sense for form in forms for sense in table.senses.get(form, ()))


@functools.lru_cache(maxsize=65536)
def _kinds_of(word: str) -> frozenset[int]:
    """Every synset `word` is a kind of, its own included."""
    return frozenset().union(*(_kinds_of_sense(sense) for sense in _senses(word)))


@functools.lru_cache(maxsize=65536)
def _kinds_of_sense(sense: int) -> frozenset[int]:
    """Every synset `sense` is a kind of, itself included."""
    parents = _table().parents
    seen: set[int] = set()
    todo = [sense]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(parents.get(current, ()))
    return frozenset(seen)


@functools.lru_cache(maxsize=65536)
def _asked(word: str) -> frozenset[int]:
    """What a note's word may be to say `word`: its synsets and, one step up, what they are kinds of."""
    parents = _table().parents
    own = _senses(word)
    return own | {parent for sense in own for parent in parents.get(sense, ())}


def says(word: str, other: str) -> bool:
    """Whether `other` (in a note) says `word` (in a question): a synonym, a kind of it, or one step up."""
    asked = _asked(word)
    if not asked:
        return False
    own = _senses(word)
    return bool(_kinds_of(other) & own) or bool(_senses(other) & asked)


_PLACES = ("location", "structure", "facility", "road", "organization", "institution")


@functools.cache
def _places() -> frozenset[int]:
    return frozenset(sense for place in _PLACES for sense in _senses(place))


def is_a_place(word: str) -> bool:
    """Whether every usual sense of the noun `word` is a kind of place, building or body ("zoo", "park",
    "station", "hotel"): not "smith", "bill", "rose", "hill", nor a word WordNet does not know."""
    own = _senses(word)
    return bool(own) and all(_kinds_of_sense(sense) & _places() for sense in own)


_LIVING = ("person", "organism", "people")


@functools.cache
def _living() -> frozenset[int]:
    return frozenset(sense for kind in _LIVING for sense in _senses(kind))


def is_living(word: str) -> bool:
    """Whether some usual sense of the noun `word` is a person, a people or another living thing ("kids",
    "guests", "plants"): what "they" may point at besides things."""
    return any(_kinds_of_sense(sense) & _living() for sense in _senses(word))


def is_a_noun(word: str) -> bool:
    """Whether WordNet knows `word` (in any of its forms) as a noun."""
    return bool(_senses(word))


def opposites(word: str) -> frozenset[str]:
    """The adjectives WordNet gives as the opposite of the adjective `word`: its antonyms and the words of
    their clusters ("slow" → "fast", "rapid", "quick" …; "old" → "new", "modern" …). Empty for other words."""
    return frozenset(_table().opposites.get(word.lower(), ()))


def says_any(word: str, others: set[str]) -> bool:
    """Whether one of `others` says `word`. Words of one or two letters are left out: WordNet's "a" is an
    ampere and "in" an inch."""
    return bool(_asked(word)) and any(says(word, other) for other in others if len(other) > 2 and other.isalpha())


# --- Building the table from WordNet's database files ----------------------------------------------


def build(wordnet: Path, out: Path = TABLE) -> None:
    """Write the table from a WordNet 3.0 `dict` directory (its index.noun, data.noun and noun.exc)."""
    ids: dict[int, int] = {}  # a synset's byte offset in data.noun → its number here

    def synset(offset: str) -> int:
        return ids.setdefault(int(offset), len(ids))

    senses = {
        lemma: [synset(offset) for offset in usual] for lemma, usual in _usual_senses(wordnet / "index.noun").items()
    }
    parents: dict[int, list[int]] = {}
    for line in (wordnet / "data.noun").read_text(encoding="utf-8").splitlines():
        if line.startswith(" ") or not line:
            continue
        fields = line.split(" | ", 1)[0].split()  # offset, lexicographer file, "n", words (hex), the words, …
        at = 4 + 2 * int(fields[3], 16)
        own = synset(fields[0])
        for index in range(int(fields[at])):  # each pointer: its symbol, offset, part of speech and words
            symbol, offset = fields[at + 1 + 4 * index : at + 3 + 4 * index]
            if symbol in _POINTERS:
                parents.setdefault(own, []).append(synset(offset))
    bases: dict[str, list[str]] = {}
    for line in (wordnet / "noun.exc").read_text(encoding="utf-8").splitlines():
        form, *lemmas = line.split()
        known = [lemma for lemma in lemmas if lemma in senses]
        if known and form.isalpha():
            bases[form] = known
    opposites = _adjective_opposites(wordnet)
    # No time stamp in the gzip header: the same WordNet gives the same bytes.
    with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as packed, io.TextIOWrapper(packed, "utf-8") as table:
        for lemma, numbers in sorted(senses.items()):
            table.write(f"w\t{lemma}\t{','.join(map(str, numbers))}\n")
        for number, numbers in sorted(parents.items()):
            table.write(f"p\t{number}\t{','.join(map(str, numbers))}\n")
        for form, lemmas in sorted(bases.items()):
            table.write(f"x\t{form}\t{','.join(lemmas)}\n")
        for adjective, others in sorted(opposites.items()):
            table.write(f"o\t{adjective}\t{','.join(sorted(others))}\n")


def _adjective_opposites(wordnet: Path) -> dict[str, set[str]]:
    """Each adjective's opposites from data.adj: a head synset's antonyms ("!") with their satellites ("&"),
    for the head's words and its satellites' alike ("rapid", a satellite of "fast", is the opposite of "slow")."""
    words: dict[str, list[str]] = {}
    antonyms: dict[str, list[str]] = {}
    heads: dict[str, list[str]] = {}  # a satellite's head synsets
    satellites: dict[str, list[str]] = {}  # a head's satellite synsets
    for line in (wordnet / "data.adj").read_text(encoding="utf-8").splitlines():
        if line.startswith(" ") or not line:
            continue
        fields = line.split(" | ", 1)[0].split()
        offset, count = fields[0], int(fields[3], 16)
        words[offset] = [re.sub(r"\(.*\)$", "", word).lower() for word in fields[4 : 4 + 2 * count : 2]]
        at = 4 + 2 * count
        for index in range(int(fields[at])):
            symbol, other = fields[at + 1 + 4 * index : at + 3 + 4 * index]
            if symbol == "!":
                antonyms.setdefault(offset, []).append(other)
            elif symbol == "&" and fields[2] == "s":
                heads.setdefault(offset, []).append(other)
            elif symbol == "&":
                satellites.setdefault(offset, []).append(other)

    def cluster(head: str) -> set[str]:
        return {word for synset in [head, *satellites.get(head, [])] for word in words[synset]}

    opposites: dict[str, set[str]] = {}
    for lemma, usual in _usual_senses(wordnet / "index.adj").items():
        opposite = {
            word
            for offset in usual
            for head in heads.get(offset, [offset])
            for other in antonyms.get(head, [])
            for word in cluster(other)
            if re.fullmatch(r"[a-z][a-z-]*", word)
        }
        if opposite:
            opposites[lemma] = opposite
    return opposites


def _usual_senses(index: Path) -> dict[str, list[str]]:
    """Each lemma's usual synsets (byte offsets) in a WordNet index file: those tagged in its sense-tagged
    texts, or all when none is."""
    senses: dict[str, list[str]] = {}
    for line in index.read_text(encoding="utf-8").splitlines():
        if line.startswith(" ") or not line:
            continue  # the licence at the top
        fields = line.split()
        lemma, count, pointers = fields[0], int(fields[2]), int(fields[3])
        if not re.fullmatch(r"[a-z][a-z'-]*", lemma):
            continue  # phrases ("ice_cream"), numbers and names with capitals stay out
        tagged = int(fields[5 + pointers])
        offsets = fields[6 + pointers : 6 + pointers + count]
        senses[lemma] = offsets[:tagged] or offsets  # untagged senses come in no order of use
    return senses


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "build":
        sys.exit("usage: python -m chat.kinds build WORDNET_DICT_DIR")
    build(Path(sys.argv[2]))
