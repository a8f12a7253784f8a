#!/usr/bin/env bash
# Inference engines voxcall can use, and the flags each needs for tool calls. A reference to copy from (README:
# "Backends"); run one line, not the file. Only the llama-server lines were run on this project's machines; vLLM
# and Ollama are as their documentation gives them (no GPU, no model downloads there).
exit 0

# llama.cpp's server (the prebuilt engine of the [local] extra: nothing to build), with voxcall's local tool path:
.venv/bin/python -m voxcall.llm.local.serve --model smollm2-135m --parallel 4 --ctx-size 2048 --port 8080 &
.venv/bin/voxcall serve --llm llama-server --base-url http://127.0.0.1:8080 --model smollm2-135m

# vLLM (GPU): tool calls need --enable-auto-tool-choice and the model's parser; tool_choice "required" needs
# vLLM >= 0.8.3. Llama 3.1/3.2: --tool-call-parser llama3_json --chat-template
# examples/tool_chat_template_llama3.1_json.jinja; Mistral: --tool-call-parser mistral.
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes --max-num-seqs 64
voxcall serve --llm openai-chat --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct

# Ollama: tools work for models whose template has them (qwen2.5, llama3.1, mistral-nemo …); any key.
VOXCALL_LLM_API_KEY=ollama voxcall serve --llm openai-chat --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b
