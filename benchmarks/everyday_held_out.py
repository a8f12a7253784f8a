"""The HELD-OUT split of the everyday request set (``bench_local_tools.py --held-out``): the same seven tools as
:mod:`everyday_set` (:data:`everyday_tools.TOOLS`), and the same kinds of lists (requests that need a tool, with
the call expected; requests that need none; Chinese ones; requests that name a tool without the value its call needs,
and answers completing them; follow-ups after a tool's result), written apart from the development set and from the
rules tuned on it.

Do not read these requests while tuning rules, prompts or words, and do not add a request here because it fails:
then the split stops measuring how the rules generalise. Tune on :mod:`everyday_set` (the development set); run this
set afterwards, as a report, and give its figures beside the development set's.
"""

from __future__ import annotations

from typing import Any

from everyday_tools import Expected, _calc, _one

HELD_OUT_TOOL_REQUESTS: list[tuple[str, Expected]] = [
    ("I need 17 times 23.", _calc("mul", 17, 23)),
    ("What do you get if you take 64 away from 200?", _calc("sub", 200, 64)),
    ("If I split 90 dollars between 6 people, how much does each get?", _calc("div", 90, 6)),
    ("Quick sum for me: 48 plus 52.", _calc("add", 48, 52)),
    ("How much is 144 over 12?", _calc("div", 144, 12)),
    ("What's 9.5 plus 3.25?", _calc("add", 9.5, 3.25)),
    ("I could use some Miles Davis.", _one("play_music", query="Miles Davis")),
    ("Put on Hotel California.", _one("play_music", query="Hotel California")),
    ("Can I hear something by Adele?", _one("play_music", query="Adele")),
    ("Let's have some country music.", ("play_music", [{"query": "country"}, {"query": "country music"}])),
    ("Play me a little hip hop.", ("play_music", [{"query": "hip hop"}, {"query": "hip-hop"},
                                                 {"query": "hip hop music"}, {"query": "hip-hop music"}])),
    ("Throw on some lo-fi beats.", ("play_music", [{"query": "lo-fi beats"}, {"query": "lo-fi"},
                                                   {"query": "lofi beats"}, {"query": "lofi"}])),
    ("Queue up Thriller by Michael Jackson.", ("play_music", [{"query": "Thriller"},
                                                              {"query": "Thriller by Michael Jackson"},
                                                              {"query": "Thriller Michael Jackson"},
                                                              {"query": "Michael Jackson Thriller"}])),
    ("Kill the music.", _one("stop_music")),
    ("Pause the song for now.", _one("stop_music")),
    ("Could you stop the playback?", _one("stop_music")),
    ("I'm done listening, you can switch the music off.", _one("stop_music")),
    ("Bump the sound to 60.", _one("set_volume", level=60)),
    ("Make the volume 35.", _one("set_volume", level=35)),
    ("Can you drop the volume to 15?", _one("set_volume", level=15)),
    ("Turn it down to 40 percent.", _one("set_volume", level=40)),
    ("Crank the volume all the way to 100.", _one("set_volume", level=100)),
    ("Put the speaker at level 45.", _one("set_volume", level=45)),
    ("Wake me in 20 minutes with a timer.", _one("set_timer", minutes=20)),
    ("Count down 8 minutes for the pasta.", _one("set_timer", minutes=8)),
    ("Give me a two minute timer.", _one("set_timer", minutes=2)),
    ("I need a timer for an hour.", _one("set_timer", minutes=60)),
    ("Time my tea for 4 minutes.", _one("set_timer", minutes=4)),
    ("Put a timer on for twelve minutes.", _one("set_timer", minutes=12)),
    ("Half an hour timer, please.", _one("set_timer", minutes=30)),
    ("Is it chilly in Oslo right now?", _one("get_weather", city="Oslo")),
    ("Do I need an umbrella in Seattle?", _one("get_weather", city="Seattle")),
    ("What's it like outside in Chicago?", _one("get_weather", city="Chicago")),
    ("Check the forecast for Dublin.", _one("get_weather", city="Dublin")),
    ("How warm is it in Bangkok today?", _one("get_weather", city="Bangkok")),
    ("Is it snowing in Toronto?", _one("get_weather", city="Toronto")),
    ("What are the conditions in San Francisco this afternoon?", _one("get_weather", city="San Francisco")),
    ("Could you light up the dining room?", _one("set_lights", room="dining room", on=True)),
    ("Kill the lights in the basement.", _one("set_lights", room="basement", on=False)),
    ("It's dark in the study, turn the light on.", _one("set_lights", room="study", on=True)),
    ("Switch the porch light off.", _one("set_lights", room="porch", on=False)),
    ("Lights on in the nursery, please.", _one("set_lights", room="nursery", on=True)),
    ("Shut off the lights in the kids' room.", ("set_lights", [{"room": "kids' room", "on": False},
                                                               {"room": "kids room", "on": False},
                                                               {"room": "kid's room", "on": False}])),
    ("Can you switch the attic lights on?", _one("set_lights", room="attic", on=True)),
]

HELD_OUT_ZH_TOOL_REQUESTS: list[tuple[str, Expected]] = [
    ("三十五加四十七等于几？", _calc("add", 35, 47)),
    ("九十减去二十八是多少？", _calc("sub", 90, 28)),
    ("上海今天冷不冷？", ("get_weather", [{"city": "上海"}, {"city": "上海市"}])),
    ("广州明天会下雨吗？", ("get_weather", [{"city": "广州"}, {"city": "广州市"}])),
    ("帮我放一首周杰伦的歌。", ("play_music", [{"query": "周杰伦"}, {"query": "周杰伦的歌"}])),
    ("我想听古典音乐。", ("play_music", [{"query": "古典音乐"}, {"query": "古典"}])),
    ("把声音调小到二十。", _one("set_volume", level=20)),
    ("音量调到六十。", _one("set_volume", level=60)),
    ("帮我计时三分钟。", _one("set_timer", minutes=3)),
    ("十五分钟后提醒我，设个计时器。", _one("set_timer", minutes=15)),
    ("关掉卧室的灯。", _one("set_lights", room="卧室", on=False)),
    ("把客厅的灯打开。", _one("set_lights", room="客厅", on=True)),
    ("别放音乐了。", _one("stop_music")),
]

HELD_OUT_PLAIN_REQUESTS: list[str] = [
    "What's a good song to sing at a wedding?",
    "Who invented the light bulb?",
    "What's the difference between weather and climate?",
    "What instrument did Miles Davis play?",
    "How loud is a jet engine?",
    "What time zone is Tokyo in?",
    "How does a thermometer work?",
    "Who was the first person to walk on the moon?",
    "I had a really long day at work.",
    "Can you help me think of a name for my dog?",
    "What's the plural of mouse?",
    "Do you like music?",
    "Tell me a short story about a dragon.",
    "How do rainbows form?",
    "Nice to meet you.",
    "Should I water my plants every day?",
]

HELD_OUT_ZH_PLAIN_REQUESTS: list[str] = [
    "早上好！",
    "你叫什么名字？",
    "长城有多长？",
    "推荐一本好看的小说。",
    "你喜欢什么音乐？",
    "晚安。",
]

HELD_OUT_FOLLOW_UPS: list[tuple[str, str, dict[str, Any], str, tuple[str, ...]]] = [
    # request, the call made, its arguments, the tool's output, words of which a relaying reply has one
    ("Do I need a jacket in Stockholm?", "get_weather", {"city": "Stockholm"}, "Cloudy, 4 degrees",
     ("cloud", "4", "four")),
    ("Put on some Nina Simone.", "play_music", {"query": "Nina Simone"}, "Now playing Feeling Good by Nina Simone",
     ("feeling good", "nina simone")),
    ("Time 7 minutes for the eggs.", "set_timer", {"minutes": 7}, "Timer set for 7 minutes", ("7", "seven")),
    ("Turn the garden lights off.", "set_lights", {"room": "garden", "on": False}, "Garden lights are off",
     ("off", "light")),
    ("What's 56 divided by 7?", "calculator", {"op": "div", "a": 56, "b": 7}, "8", ("8", "eight")),
    ("Bring the volume down to 35.", "set_volume", {"level": 35}, "Volume set to 35",
     ("35", "thirty-five", "thirty five")),
    ("Pause the music.", "stop_music", {}, "Music stopped", ("stop", "pause")),
    ("深圳天气如何？", "get_weather", {"city": "深圳"}, "晴，28度", ("晴", "28")),
]

HELD_OUT_WITHOUT_VALUES: list[tuple[str, str]] = [
    # a request naming a tool but not the value its call needs, and the tool: the right reply calls nothing and asks
    ("Will it be sunny tomorrow?", "get_weather"),
    ("Is it going to rain later?", "get_weather"),
    ("How cold is it outside?", "get_weather"),
    ("I need a timer.", "set_timer"),
    ("Start a countdown for me.", "set_timer"),
    ("It's too dark, can you put the lights on?", "set_lights"),
    ("Adjust the volume for me.", "set_volume"),
    ("Put a song on for me.", "play_music"),
    ("Can you do some math for me?", "calculator"),
    ("明天天气怎么样？", "get_weather"),
    ("帮我定一个计时器。", "set_timer"),
    ("帮我定个闹钟。", "set_timer"),
    ("把灯关了。", "set_lights"),
    ("调一下音量。", "set_volume"),
    ("放首歌吧。", "play_music"),
]

HELD_OUT_ANSWERED: list[tuple[str, str, Expected]] = [
    # a request without its value, the user's answer to the question it gets, and the call the answer completes
    ("Will it be sunny tomorrow?", "In Vienna.", _one("get_weather", city="Vienna")),
    ("I need a timer.", "Twenty-five minutes.", _one("set_timer", minutes=25)),
    ("It's too dark, can you put the lights on?", "The living room.",
     _one("set_lights", room="living room", on=True)),
    ("Adjust the volume for me.", "Make it 55.", _one("set_volume", level=55)),
    ("Put a song on for me.", "Something by Queen.", _one("play_music", query="Queen")),
    ("明天天气怎么样？", "杭州。", ("get_weather", [{"city": "杭州"}, {"city": "杭州市"}])),
]
