"""The ninth and later batches of the everyday development set (:mod:`everyday_set` appends them to its lists after
those of :mod:`everyday_later`): each written before a run of it, with what that run found noted at its head, and
compared with the held-out split (:mod:`everyday_held_out`) before it was run: requests the same as a held-out one
are left out.
"""

from __future__ import annotations

from everyday_tools import Expected, _calc, _one

RECENT_TOOL_REQUESTS: list[tuple[str, Expected]] = [
    # a ninth batch, written after those rules, before a run of it (32/34 then: "a ticket costs 12 dollars, how much do
    # 7 tickets cost?" answered in words with arithmetic of the model's own, "the laundry room" as "laundry")
    ("Add up 125 and 375 for me.", _calc("add", 125, 375)),
    ("How much is 81 divided by 9?", _calc("div", 81, 9)),
    ("If a ticket costs 12 dollars, how much do 7 tickets cost?", _calc("mul", 12, 7)),
    ("I had 500 dollars and spent 235. How much is left?", _calc("sub", 500, 235)),
    ("Take 19 away from 63.", _calc("sub", 63, 19)),
    ("What do you get when you multiply 14 by 6?", _calc("mul", 14, 6)),
    ("Calculate 1024 divided by 16.", _calc("div", 1024, 16)),
    ("Play some Taylor Swift.", _one("play_music", query="Taylor Swift")),
    ("Could you play the Rolling Stones?", ("play_music", [{"query": "the Rolling Stones"},
                                                           {"query": "Rolling Stones"}])),
    ("I'm in the mood for classical music.", ("play_music", [{"query": "classical"}, {"query": "classical music"}])),
    ("Put on Bohemian Rhapsody.", _one("play_music", query="Bohemian Rhapsody")),
    ("Play some hip hop.", ("play_music", [{"query": "hip hop"}])),
    ("Can I get some reggae going?", ("play_music", [{"query": "reggae"}])),
    ("Stop playing music.", _one("stop_music")),
    ("Enough music, turn it off.", _one("stop_music")),
    ("Halt the music.", _one("stop_music")),
    ("Volume 30.", _one("set_volume", level=30)),
    ("Can you set the volume to 55?", _one("set_volume", level=55)),
    ("Volume down to 12, please.", _one("set_volume", level=12)),
    ("Make the speaker quieter, 25 please.", _one("set_volume", level=25)),
    ("Set a timer for 12 minutes.", _one("set_timer", minutes=12)),
    ("Count down 3 minutes for the tea.", _one("set_timer", minutes=3)),
    ("Timer for two and a half hours.", _one("set_timer", minutes=150)),
    ("Can you remind me in 45 minutes?", _one("set_timer", minutes=45)),
    ("What's the forecast for Dublin?", _one("get_weather", city="Dublin")),
    ("Is it hot in Dubai right now?", _one("get_weather", city="Dubai")),
    ("Do I need sunscreen in Sydney today?", _one("get_weather", city="Sydney")),
    ("Will it be windy in Wellington tomorrow?", _one("get_weather", city="Wellington")),
    ("Check the weather in Buenos Aires.", _one("get_weather", city="Buenos Aires")),
    ("Turn off the garage lights.", _one("set_lights", room="garage", on=False)),
    ("Switch the laundry room lights on.", _one("set_lights", room="laundry room", on=True)),
    ("Can you light up the porch?", _one("set_lights", room="porch", on=True)),
    ("It's too dark in the cellar, turn the lights on.", _one("set_lights", room="cellar", on=True)),
    ("Lights off in the office.", _one("set_lights", room="office", on=False)),
    # a tenth batch, written after the rules the ninth led to, before a run of it (27/31 then: 40 dollars a week for 6
    # weeks answered in words with arithmetic of the model's own, sweets shared equally "each" as a product, "I wanna
    # hear Coldplay." as get_weather, "No more songs, thanks." answered in words); some written as a recogniser
    # without punctuation or capitals transcribes them
    ("what is 45 times 3", _calc("mul", 45, 3)),
    ("Could you tell me what 250 minus 75 is?", _calc("sub", 250, 75)),
    ("I need to divide 96 by 12.", _calc("div", 96, 12)),
    ("What's the sum of 64 and 36?", _calc("add", 64, 36)),
    ("What's 8 times 9 again?", _calc("mul", 8, 9)),
    ("If I save 40 dollars a week for 6 weeks, how much will I have?", _calc("mul", 40, 6)),
    ("We have 3 kids and 27 sweets to share equally. How many each?", _calc("div", 27, 3)),
    ("play some blues rock", _one("play_music", query="blues rock")),
    ("Put some music on, maybe the Eagles.", ("play_music", [{"query": "the Eagles"}, {"query": "Eagles"}])),
    ("I wanna hear Coldplay.", _one("play_music", query="Coldplay")),
    ("Play me something by Beyonce.", _one("play_music", query="Beyonce")),
    ("Could you start the song Imagine?", ("play_music", [{"query": "Imagine"}, {"query": "the song Imagine"}])),
    ("Throw on some reggaeton.", _one("play_music", query="reggaeton")),
    ("stop the song please", _one("stop_music")),
    ("Please turn off the music.", _one("stop_music")),
    ("No more songs, thanks.", _one("stop_music")),
    ("set volume to 40", _one("set_volume", level=40)),
    ("It's too loud, bring it down to 20.", _one("set_volume", level=20)),
    ("Could you raise the volume to 75?", _one("set_volume", level=75)),
    ("set a timer for 7 minutes", _one("set_timer", minutes=7)),
    ("Start a timer for an hour and a half.", _one("set_timer", minutes=90)),
    ("I need a 20 minute timer for the pasta.", _one("set_timer", minutes=20)),
    ("whats the weather in berlin", ("get_weather", [{"city": "berlin"}, {"city": "Berlin"}])),
    ("Should I take an umbrella in Lisbon tomorrow?", _one("get_weather", city="Lisbon")),
    ("What's it like outside in Denver?", _one("get_weather", city="Denver")),
    ("Is it going to be warm in Athens this weekend?", _one("get_weather", city="Athens")),
    ("turn on the office lights", _one("set_lights", room="office", on=True)),
    ("Kill the lights in the garage.", _one("set_lights", room="garage", on=False)),
    ("Could you switch the hallway light off?", _one("set_lights", room="hallway", on=False)),
    ("Bedroom lights on, please.", _one("set_lights", room="bedroom", on=True)),
    ("Lights off in the guest room.", _one("set_lights", room="guest room", on=False)),
]

RECENT_ZH_TOOL_REQUESTS: list[tuple[str, Expected]] = [
    # a ninth batch (6/6)
    ("一百二十加八十等于多少？", _calc("add", 120, 80)),
    ("北京后天会下雪吗？", _one("get_weather", city="北京")),
    ("播放周杰伦的歌。", ("play_music", [{"query": "周杰伦"}, {"query": "周杰伦的歌"}])),
    ("音量调小一点，调到十五。", _one("set_volume", level=15)),
    ("二十分钟后提醒我。", _one("set_timer", minutes=20)),
    ("把阳台的灯关了。", _one("set_lights", room="阳台", on=False)),
    # a tenth batch (6/6)
    ("十二乘以十二是多少？", _calc("mul", 12, 12)),
    ("深圳明天热不热？", _one("get_weather", city="深圳")),
    ("我想听摇滚乐。", ("play_music", [{"query": "摇滚乐"}, {"query": "摇滚"}])),
    ("把声音调到四十。", _one("set_volume", level=40)),
    ("帮我计时五分钟。", _one("set_timer", minutes=5)),
    ("打开卧室的灯。", _one("set_lights", room="卧室", on=True)),
]

RECENT_PLAIN_REQUESTS: list[str] = [
    # a ninth batch (1/8 false calls then: "I turned the lights off before leaving." switched them off)
    "What's the best music app?",
    "How hot is the sun?",
    "Why do we have time zones?",
    "What languages do you speak?",
    "I turned the lights off before leaving.",
    "Is it true that music helps plants grow?",
    "Who invented the telephone?",
    "What is the coldest place on earth?",
    # a tenth batch (2/8 false calls then: "I just got back from a concert, it was amazing." played "concert", "My
    # kitchen is a mess." asked the weather of "kitchen")
    "what time is it in london",
    "How do I reset my router?",
    "What's the difference between a violin and a viola?",
    "I just got back from a concert, it was amazing.",
    "Can you recommend a book?",
    "What year did the Beatles break up?",
    "How many arms does an octopus have?",
    "My kitchen is a mess.",
]
