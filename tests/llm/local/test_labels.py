"""labels: which quoted values the words label with a parameter's name, and what the calls grammar makes of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from voxcall.llm.local.grammar import calls_grammar
from voxcall.llm.local.labels import Labels
from voxcall.llm.local.lexicon import said_numbers
from voxcall.llm.local.said import Said
from voxcall.tools import Tool

if TYPE_CHECKING:
    from tests.llm.local.gbnf import GrammarChecker

TEXT = {"type": "string"}
ARTICLE = {"ContentItem": {"type": "string", "enum": ["news", "blog"]}, "Title": TEXT, "Content": TEXT,
           "MetaTitle": TEXT, "MetaDescription": TEXT, "UrlName": TEXT}
SERVER = {"nickname": TEXT, "host": TEXT, "port": {"type": "integer"}, "database": TEXT, "username": TEXT,
          "password": TEXT}


def given(text: str, properties: dict[str, Any]) -> dict[str, list[str]]:
    return {name: list(values) for name, values in Said(text).labelled(properties).given.items()}


def test_a_field_named_before_its_quoted_value() -> None:
    """The 0.5B model wrote ``Title='Productivity and Sleep Patterns'``: the meta title's value."""
    text = ("I want to publish a news article titled 'Julian is Testing' with 'a detailed analysis of sleep' as "
            "content. Could you set up the meta title to be 'Productivity and Sleep Patterns' and the URL to "
            "'julian-testing'? Let's also add a brief meta description saying 'How sleep affects work'.")
    assert given(text, ARTICLE) == {
        "Title": ["Julian is Testing"], "Content": ["a detailed analysis of sleep"],
        "MetaTitle": ["Productivity and Sleep Patterns"], "UrlName": ["julian-testing"],
        "MetaDescription": ["How sleep affects work"]}


def test_the_most_words_of_a_name_then_the_largest_share_of_them() -> None:
    assert given("The title should be 'A'. The meta title is 'B'.", ARTICLE) == {"Title": ["A"], "MetaTitle": ["B"]}
    names = {"first_name": TEXT, "last_name": TEXT}
    assert given("Call me by the name 'Bob'", names) == {}  # a tie: either
    assert given("My last name is 'Smith'", names) == {"last_name": ["Smith"]}


def test_a_label_after_the_value() -> None:
    text = ("Add a server with the nickname 'PrimaryDB', host IP as '192.168.0.10', port number 5432, connecting "
            "to the 'main' database, with 'admin_user' as username and 'secure*pass123' as the password?")
    assert given(text, SERVER) == {"nickname": ["PrimaryDB"], "host": ["192.168.0.10"], "database": ["main"],
                                   "username": ["admin_user"], "password": ["secure*pass123"]}


def test_no_label_across_other_words_or_onto_a_value_of_its_own() -> None:
    """"time for a 'Basketball Game'" gives no start time, "the 'Orion' version 2.1.3" no version."""
    event = {"title_of_event": {"type": "integer"}, "start_time": TEXT}
    assert given("Block out time for a 'Basketball Game' on Friday", event) == {}
    project = {"name": TEXT, "version": TEXT}
    assert given("see details for the 'Orion' version 2.1.3", project) == {}
    assert given("the version 'Orion'", project) == {"version": ["Orion"]}


def test_only_plain_strings_take_a_label() -> None:
    """A choice, an identifier and a date in a prescribed form have rules of their own."""
    properties = {"category": {"type": "string", "enum": ["news"]}, "project_id": TEXT,
                  "date": {"type": "string", "description": "The date, in the format 'YYYY-MM-DD'"}, "note": TEXT}
    text = "the category 'news', the project id 'DA-1', the date 'March 1st' and the note 'call back'"
    assert given(text, properties) == {"note": ["call back"]}


def test_a_quoted_value_is_taken_as_the_user_wrote_it() -> None:
    """BFCL's "message 'Happy Birthday!'" wants the mark; a span of the words would drop it."""
    assert given("send a message saying 'Happy Birthday!'", {"message": TEXT}) == {"message": ["Happy Birthday!"]}


def test_what_a_label_takes_from_the_other_arguments() -> None:
    labels = Labels({"password": ["12341234"], "title": ["Happy Birthday!"]}, ("free",))
    assert labels.values("password") == ["12341234", "free"]
    assert labels.untaken(["Happy Birthday", "admin", 12341234, 5432]) == ["admin", 5432]
    assert labels.untaken(["Happy Birthday"]) == ["Happy Birthday"]  # none left: all of them
    assert labels.untaken(["Happy Birthday"], keep=False) == []


def test_one_as_a_pronoun_is_no_number() -> None:
    """"the port is the default one" gave ``port=1``."""
    assert said_numbers("The port is the default one.") == []
    assert said_numbers("that one, please") == []
    assert said_numbers("a timer for one minute") == [1]
    assert said_numbers("the top one hundred songs") == [100]


def test_the_grammar_gives_each_labelled_field_its_value(checker: GrammarChecker) -> None:
    article = Tool("create_article", "", {"type": "object", "properties": ARTICLE, "required": list(ARTICLE)[:3]})
    grammar = calls_grammar([article], said="Publish a news article titled 'Julian is Testing' with the meta title "
                                            "'Sleep Patterns' and some content about sleep")
    assert checker.accepts(grammar, "create_article(ContentItem='news', Title='Julian is Testing', Content='sleep', "
                                    "MetaTitle='Sleep Patterns')</code>")
    assert not checker.accepts(grammar, "create_article(ContentItem='news', Title='Sleep Patterns', "
                                        "Content='sleep', MetaTitle='Sleep Patterns')</code>")
    # a value labelled for another field is no other's; a labelled optional one is passed
    assert not checker.accepts(grammar, "create_article(ContentItem='news', Title='Julian is Testing', "
                                        "Content='Sleep Patterns', MetaTitle='Sleep Patterns')</code>")
    assert not checker.accepts(grammar, "create_article(ContentItem='news', Title='Julian is Testing', "
                                        "Content='sleep')</code>")


def test_a_number_in_a_labelled_value_is_no_other_argument(checker: GrammarChecker) -> None:
    """The 0.5B model wrote ``port=12341234`` for "a password '12341234'" (the port: "the default one")."""
    server = Tool("add_server", "", {"type": "object", "properties": SERVER, "required": ["host", "password"]})
    grammar = calls_grammar([server], said="The host is 'plgah.ca' and the port is the default one, with a "
                                           "password '12341234'.")
    assert checker.accepts(grammar, "add_server(host='plgah.ca', password='12341234')</code>")
    assert not checker.accepts(grammar, "add_server(host='plgah.ca', password='12341234', port=12341234)</code>")
    assert not checker.accepts(grammar, "add_server(host='plgah.ca', password='12341234', port=1)</code>")
