"""The Chinese device requests of ``bench_chinese_speech.py``, and how a transcript of one is scored.

Forty short requests of the kind xiaozhi devices hear (volume, music, weather, timers and alarms, lights, questions,
arithmetic, chit-chat), in simplified Chinese, some with numbers in digits (a voice must read them; a recogniser may
write them either way). Two halves of twenty, alike in kind: settings are chosen on :data:`DEV`; :data:`HELD_OUT` is
only measured, never looked at while choosing, and both halves are reported.

Scoring: character error rate, the edit distance between the normalised reference and transcript over the
reference's length, summed over a half. :func:`normalise` reads symbols and digits as a Chinese voice in a session
says them (voxcall's Chinese verbalizer, then :func:`voxcall.speech.hanzi_numbers.say_numbers`: 12×8 and 十二乘以八
are the same, as are 30% and 百分之三十), drops punctuation and spaces and lower-cases Latin letters. Traditional
characters are not mapped to simplified (a device's transcript is shown and read as written): 樂 for 乐 counts as an
error; voxcall's own conversion (:data:`voxcall.speech.stt.SCRIPTS`) is what the "simplified" recognisers measure.
"""

from __future__ import annotations

import re

from voxcall.speech.hanzi_numbers import say_numbers
from voxcall.speech.verbalizer import verbalizer_for

DEV = [
    "把音量调到百分之三十",
    "今天北京的天气怎么样",
    "帮我定一个五分钟的计时器",
    "播放周杰伦的晴天",
    "明天早上七点叫我起床",
    "现在几点了",
    "声音大一点",
    "暂停音乐",
    "上海明天会下雨吗",
    "12乘以8等于多少",
    "给我讲一个笑话",
    "你叫什么名字",
    "下一首歌",
    "把卧室的灯关掉",
    "一公里等于多少米",
    "我今天有点累",
    "提醒我下午3点开会",
    "长城有多长",
    "把温度设到26度",
    "谢谢你，晚安",
]
"""The half settings are chosen on."""

HELD_OUT = [
    "把音量调小一点",
    "深圳这个周末的天气怎么样",
    "设置一个十分钟的倒计时",
    "我想听轻音乐",
    "后天是星期几",
    "静音",
    "继续播放",
    "广州今天多少度",
    "100减去37是多少",
    "给我讲个故事吧",
    "你会说英语吗",
    "播放上一首",
    "打开客厅的空调",
    "一斤等于多少克",
    "我有点无聊，陪我聊聊天",
    "提醒我明天买牛奶",
    "珠穆朗玛峰有多高",
    "把亮度调到最大",
    "定一个7:30的闹钟",
    "好的，再见",
]
"""The half that is only measured."""

_KEPT = re.compile(r"[\u3400-\u9fffa-z0-9]")
_VERBALIZE = verbalizer_for("zh")


def normalise(text: str) -> str:
    """``text`` as it is scored: symbols and numbers read as words, only Chinese characters and Latin letters kept
    (lower case)."""
    assert _VERBALIZE is not None  # voxcall has a Chinese table
    return "".join(_KEPT.findall(say_numbers(_VERBALIZE(text)).lower()))


def edits(reference: str, heard: str) -> int:
    """The Levenshtein distance between two strings (substitutions, insertions and deletions of characters)."""
    previous = list(range(len(heard) + 1))
    for row, expected in enumerate(reference, 1):
        current = [row]
        for column, got in enumerate(heard, 1):
            current.append(min(previous[column] + 1, current[column - 1] + 1,
                               previous[column - 1] + (expected != got)))
        previous = current
    return previous[-1]
