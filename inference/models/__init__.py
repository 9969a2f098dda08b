"""Model architectures. Qwen2 and Llama share one decoder (models/decoder.py); they differ only in config flags."""

from inference.models.decoder import DecoderForCausalLM, ModelConfig

SUPPORTED_ARCHITECTURES = ("qwen2", "llama")

__all__ = ["SUPPORTED_ARCHITECTURES", "DecoderForCausalLM", "ModelConfig"]
