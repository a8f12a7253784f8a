"""The labelled set of ``bench_turns.py``: spoken requests, each complete and cut where a speaker naturally pauses.

Each entry of :data:`TURNS` is a complete request and the words said before a pause inside it, at a point where
the sentence cannot end ("set a timer for …", "what's the weather in …", "I'd like to …"): a judge that ends the
turn there answers half a request. The complete requests are said in one go; the cut ones are said with a silence
(:data:`PAUSES_MS`) before the rest. Every installed voice says every entry (``voice_set.voices``).
"""

from __future__ import annotations

TURNS: list[tuple[str, str]] = [
    ("What's the weather in Paris?", "What's the weather in"),
    ("Set a timer for ten minutes.", "Set a timer for"),
    ("I'd like to book a table for two.", "I'd like to"),
    ("Remind me to buy milk and bread.", "Remind me to"),
    ("What is the capital of France?", "What is the capital of"),
    ("Send a message to my mother.", "Send a message to"),
    ("Convert fifty dollars to euros.", "Convert fifty dollars to"),
    ("Can you tell me how to make pancakes?", "Can you tell me how to"),
    ("Play some music by the Beatles.", "Play some music by the"),
    ("How many days are there in a week?", "How many days are there in"),
    ("Find me a recipe with chicken and rice.", "Find me a recipe with"),
    ("Check whether the store has oat milk.", "Check whether the store has"),
    ("What time does the bakery open?", "What time does the"),
    ("Turn the volume down a little.", "Turn the volume down a"),
    ("Book a table at the Italian place.", "Book a table at the"),
    ("Why is the ocean salty?", "Why is the"),
    ("Give me a word that rhymes with orange.", "Give me a word that rhymes with"),
    ("How far away is the sun?", "How far away is"),
    ("Call my sister this evening.", "Call my sister this"),
    ("Where do penguins live?", "Where do"),
]
"""(complete request, the words before a pause inside it)."""

PAUSES_MS = {"auto": 400, "low": 700}
"""The silence inside a cut request, by the eagerness it is played against: no answer may start in it."""
