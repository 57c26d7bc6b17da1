"""The MindSpore causal-LM trainer: model, masked loss, AdamW schedule and the compiled training step."""
