"""Inside the zoo environment (torch 2.13 + the libraries): which models exist, and the tiny
parameters each one runs with.

`candidates(lib)` enumerates from the libraries' own registries (transformers:
MODEL_MAPPING_NAMES and the MODEL_FOR_*_MAPPING_NAMES with CONFIG_MAPPING; timm:
list_models() grouped by model module; diffusers: DIFFUSERS_MODELS below).
`probe(candidate)` tries parameter variants (generic shrinking of the config fields, then
larger or model-specific ones) and keeps the first whose program runs eagerly in both modes
(forward under no_grad in eval, forward + loss.backward() in train); the text it runs is
render(params, mode, eager=True), the labelled program minus torch.compile.
Run in a forked child of the zoo server (model_zoo_lib/server.py), never in the linter's
interpreter.
"""
from __future__ import annotations

import inspect
import traceback

from model_zoo_lib.render import render

SEQ = 16
BATCH = 2
MAX_PARAMS = 60_000_000
TOKEN_HI = 100  # random ids stay below the special tokens moved to 100..127

# transformers head mappings, in the order a head is chosen for a model type, with how the
# train step gets its loss: labels like the input ids, one class per sample, one per token
HEADS = [
    ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "ids"),
    ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "ids"),
    ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "ids"),
    ("MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES", "class"),
    ("MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES", "class"),
    ("MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES", "class"),
    ("MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES", "token"),
    ("MODEL_FOR_CTC_MAPPING_NAMES", None),
    ("MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", None),
    ("MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES", None),
    ("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", None),
    ("MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES", None),
    ("MODEL_FOR_DEPTH_ESTIMATION_MAPPING_NAMES", None),
    ("MODEL_FOR_OBJECT_DETECTION_MAPPING_NAMES", None),
]

# -- generic shrinking of transformers config fields ------------------------------------
HIDDEN = {"hidden_size", "d_model", "n_embd", "embed_dim", "dim", "d_embed", "word_embed_proj_dim",
          "projection_dim", "embedding_size", "hidden_dim_size", "model_dim", "text_embed_dim",
          "vision_embed_dim", "encoder_hidden_size", "decoder_hidden_size", "n_embed", "emb_dim"}
LAYERS = {"num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
          "num_encoder_layers", "num_decoder_layers", "depth", "encoder_num_hidden_layers",
          "decoder_num_hidden_layers", "num_decoder_blocks", "num_encoder_blocks", "num_blocks"}
HEADS_N = {"num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
           "decoder_attention_heads", "num_key_value_heads", "num_kv_heads", "n_kv_heads",
           "encoder_num_attention_heads", "decoder_num_attention_heads", "multi_query_group_num"}
FFN = {"intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "hidden_dim",
       "ffn_hidden_size", "mlp_dim", "dim_feedforward", "moe_intermediate_size", "decoder_intermediate_size",
       "shared_expert_intermediate_size", "intermediate_size_mlp", "encoder_intermediate_size", "inner_dim"}
HEAD_DIM = {"head_dim", "d_kv", "d_head", "kv_channels", "attention_head_dim", "attention_head_size"}
POSITIONS = {"max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "max_sequence_length",
             "max_source_positions", "max_target_positions", "seq_length", "max_length"}
EXPERTS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"}
EXPERTS_TOK = {"num_experts_per_tok", "moe_topk", "num_selected_experts", "top_k", "moe_k"}


def shrink(cfg, scale: int = 1) -> dict:
    """Overrides for a config instance: tiny sizes for the fields named like sizes."""
    import transformers

    hidden, heads = 32 * scale, 2 * scale
    out, special = {}, 127
    items = cfg.to_dict() if hasattr(cfg, "to_dict") else dict(vars(cfg))
    accepted = _init_fields(type(cfg))
    for key, value in items.items():
        if accepted is not None and key not in accepted:
            continue  # derived in __init__ (swin's num_layers = len(depths)): never passed
        sub = getattr(cfg, key, None)
        if isinstance(sub, transformers.PretrainedConfig):
            out[key] = _sub_config(sub, scale)
            continue
        if key in ("use_timm_backbone", "use_pretrained_backbone") and value is True:
            out[key] = False  # DETR-like: the transformers backbone, no timm weights
            continue
        if isinstance(value, dict) and isinstance(value.get("mrope_section"), list):
            out[key] = dict(value, mrope_section=_resize(value["mrope_section"], 8))  # half a 16 head dim
            continue
        if isinstance(value, bool) or not isinstance(value, (int, list)):
            continue
        if isinstance(value, list):
            if key in ("depths", "num_layers_per_stage") and value and all(isinstance(v, int) for v in value):
                out[key] = [1] * len(value)
            continue
        if key in HIDDEN:
            out[key] = hidden
        elif key in LAYERS:
            out[key] = 2
        elif key in HEADS_N:
            out[key] = heads
        elif key in FFN and value > 0:
            out[key] = 2 * hidden
        elif key in HEAD_DIM:
            out[key] = 16
        elif key in POSITIONS and value > 64:
            out[key] = 64
        elif key.endswith("vocab_size") and value > 128:
            out[key] = 128
        elif (key.endswith("_token_id") or key.endswith("_token_index")) and value >= 128:
            out[key], special = special, special - 1
        elif key in EXPERTS and value > 4:
            out[key] = 4
        elif key in EXPERTS_TOK and value > 2:
            out[key] = 2
        elif key == "image_size" and value > 32:
            out[key] = 32
        elif key == "patch_size" and "image_size" in items and value > 8:
            out[key] = 8
    heads_list = items.get("num_heads")
    if "embed_dim" in out and isinstance(heads_list, list) and (accepted is None or "num_heads" in accepted):
        out["num_heads"] = [heads * 2 ** i for i in range(len(heads_list))]  # swin-like stages: head dim 16
    return out


NOT_COPIED = {"architectures", "id2label", "label2id", "_name_or_path", "transformers_version", "dtype",
              "model_type", "return_dict", "output_hidden_states", "output_attentions"}


def _sub_config(sub, scale: int) -> dict:
    """A sub-config (text_config, backbone_config, ...) as a dict: the values the parent's
    default gave it that differ from its class's defaults, then the shrunk sizes."""
    try:
        defaults = type(sub)().to_dict()
    except Exception:  # noqa: BLE001
        defaults = {}
    accepted = _init_fields(type(sub))
    kept = {k: v for k, v in sub.to_dict().items()
            if k not in NOT_COPIED and (accepted is None or k in accepted) and k in defaults
            and defaults[k] != v and isinstance(v, (int, float, str, list, type(None)))}
    out = {**kept, **shrink(sub, scale)}
    if getattr(sub, "model_type", ""):
        out["model_type"] = sub.model_type
    return out


def _resize(parts: list, total: int) -> list:
    """Integers in the same proportions, summing to `total` (each at least 1)."""
    whole = sum(parts) or 1
    out = [max(1, round(p * total / whole)) for p in parts]
    out[-1] += total - sum(out)
    return out


def _init_fields(cls) -> set | None:
    """The keyword arguments a config class declares (None: it takes anything)."""
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return None
    named = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"self"}
    return named or None


def _mapping(name: str) -> dict:
    from transformers.models.auto import modeling_auto

    return getattr(modeling_auto, name, {}) or {}


def candidates(lib: str) -> list[dict]:
    if lib == "transformers":
        return _transformers_candidates()
    if lib == "timm":
        return _timm_candidates()
    if lib == "diffusers":
        return [{"lib": "diffusers", "name": n, "spec": s} for n, s in DIFFUSERS_MODELS.items()]
    raise ValueError(lib)


def _transformers_candidates() -> list[dict]:
    base = _mapping("MODEL_MAPPING_NAMES")
    seen, first, second = set(), [], []
    for model_type, cls in base.items():
        cls = cls[0] if isinstance(cls, (list, tuple)) else cls
        if cls in seen:
            continue
        seen.add(cls)
        first.append({"lib": "transformers", "name": cls, "model_type": model_type, "head": None})
        for mapping, labels in HEADS:
            head = _mapping(mapping).get(model_type)
            head = head[0] if isinstance(head, (list, tuple)) else head
            if head and head not in seen:
                seen.add(head)
                second.append({"lib": "transformers", "name": head, "model_type": model_type,
                               "head": mapping, "labels": labels})
                break
    # interleave: a base model, then a head class, so a partial run covers both kinds
    out = []
    for i in range(max(len(first), len(second))):
        out += first[i:i + 1] + second[i:i + 1]
    return out


TIMM_PREFER = ("pico", "atto", "femto", "nano", "tiny", "xxs", "xs", "small", "_050", "_075", "lite",
               "18", "b0", "_s", "light", "mini", "t_", "_t")


TIMM_AVOID = ("large", "huge", "giant", "gigantic", "xlarge", "base", "medium", "_384", "_448", "_512")


def _timm_rank(name: str) -> tuple:
    import re

    sizes = [int(m) for m in re.findall(r"(\d+)m(?:_|$)", name)]  # e.g. deepseek_vit_412m: 412M parameters
    if any(word in name for word in TIMM_AVOID) or any(m > 60 for m in sizes):
        return (len(TIMM_PREFER) + 1, len(name), name)
    for i, word in enumerate(TIMM_PREFER):
        if word in name:
            return (i, len(name), name)
    return (len(TIMM_PREFER), len(name), name)


def _timm_candidates() -> list[dict]:
    import timm
    from timm.models import _registry

    modules: dict = {}
    for name in timm.list_models():
        modules.setdefault(_registry._model_to_module.get(name, "?"), []).append(name)
    out = []
    for module, names in sorted(modules.items()):
        ranked = sorted(names, key=_timm_rank)
        take = 3 if len(names) > 40 else 1  # big families: a few architectures
        for name in ranked[:take + 2]:  # spares, used only if the first ones fail
            out.append({"lib": "timm", "name": name, "module": module, "spare": ranked.index(name) >= take})
    return out


# -- diffusers: tiny configs in the spirit of diffusers' own tests ------------------------
_UNET_INPUT = [["sample", "torch.randn(2, 3, 32, 32)"], ["timestep", "torch.tensor([1, 10])"]]
DIFFUSERS_MODELS = {
    "UNet2DModel": {
        "kwargs": {"sample_size": 32, "in_channels": 3, "out_channels": 3, "layers_per_block": 1,
                   "block_out_channels": [32, 64], "norm_num_groups": 8,
                   "down_block_types": ["DownBlock2D", "AttnDownBlock2D"],
                   "up_block_types": ["AttnUpBlock2D", "UpBlock2D"]},
        "inputs": _UNET_INPUT, "call": [["sample", "sample"], ["timestep", "timestep"]]},
    "UNet2DConditionModel": {
        "kwargs": {"sample_size": 32, "in_channels": 4, "out_channels": 4, "layers_per_block": 1,
                   "block_out_channels": [32, 64], "norm_num_groups": 8, "cross_attention_dim": 32,
                   "attention_head_dim": 8,
                   "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"],
                   "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"]},
        "inputs": [["sample", "torch.randn(2, 4, 32, 32)"], ["timestep", "torch.tensor([1, 10])"],
                   ["encoder_hidden_states", "torch.randn(2, 8, 32)"]],
        "call": [["sample", "sample"], ["timestep", "timestep"], ["encoder_hidden_states", "encoder_hidden_states"]]},
    "AutoencoderKL": {
        "kwargs": {"in_channels": 3, "out_channels": 3, "latent_channels": 4, "norm_num_groups": 8,
                   "block_out_channels": [32, 64],
                   "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D"],
                   "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D"]},
        "inputs": [["sample", "torch.randn(2, 3, 32, 32)"]], "call": [["sample", "sample"]]},
    "VQModel": {
        "kwargs": {"in_channels": 3, "out_channels": 3, "latent_channels": 3, "norm_num_groups": 8,
                   "block_out_channels": [32, 64], "num_vq_embeddings": 32,
                   "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D"],
                   "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D"]},
        "inputs": [["sample", "torch.randn(2, 3, 32, 32)"]], "call": [["sample", "sample"]]},
    "AutoencoderTiny": {
        "kwargs": {"in_channels": 3, "out_channels": 3, "latent_channels": 4,
                   "encoder_block_out_channels": [32, 32], "decoder_block_out_channels": [32, 32],
                   "num_encoder_blocks": [1, 1], "num_decoder_blocks": [1, 1]},
        "inputs": [["sample", "torch.randn(2, 3, 32, 32)"]], "call": [["sample", "sample"]]},
    "Transformer2DModel": {
        "kwargs": {"num_attention_heads": 2, "attention_head_dim": 16, "in_channels": 4, "out_channels": 4,
                   "num_layers": 2, "sample_size": 8, "patch_size": 2, "norm_type": "ada_norm_zero",
                   "num_embeds_ada_norm": 1000},
        "inputs": [["hidden_states", "torch.randn(2, 4, 8, 8)"], ["timestep", "torch.tensor([1, 10])"],
                   ["class_labels", "torch.tensor([0, 1])"]],
        "call": [["hidden_states", "hidden_states"], ["timestep", "timestep"], ["class_labels", "class_labels"]]},
    "DiTTransformer2DModel": {
        "kwargs": {"num_attention_heads": 2, "attention_head_dim": 16, "in_channels": 4, "out_channels": 4,
                   "num_layers": 2, "sample_size": 8, "patch_size": 2, "num_embeds_ada_norm": 1000},
        "inputs": [["hidden_states", "torch.randn(2, 4, 8, 8)"], ["timestep", "torch.tensor([1, 10])"],
                   ["class_labels", "torch.tensor([0, 1])"]],
        "call": [["hidden_states", "hidden_states"], ["timestep", "timestep"], ["class_labels", "class_labels"]]},
    "PixArtTransformer2DModel": {
        "kwargs": {"num_attention_heads": 2, "attention_head_dim": 16, "in_channels": 4, "out_channels": 8,
                   "num_layers": 2, "sample_size": 8, "patch_size": 2, "cross_attention_dim": 32,
                   "caption_channels": 32, "norm_num_groups": 8},
        "inputs": [["hidden_states", "torch.randn(2, 4, 8, 8)"], ["timestep", "torch.tensor([1, 10])"],
                   ["encoder_hidden_states", "torch.randn(2, 8, 32)"]],
        "call": [["hidden_states", "hidden_states"], ["timestep", "timestep"],
                 ["encoder_hidden_states", "encoder_hidden_states"],
                 ["added_cond_kwargs", "{'resolution': None, 'aspect_ratio': None}"]]},
    "ControlNetModel": {
        "kwargs": {"in_channels": 4, "layers_per_block": 1, "block_out_channels": [32, 64],
                   "norm_num_groups": 8, "cross_attention_dim": 32, "attention_head_dim": 8,
                   "conditioning_embedding_out_channels": [16, 32],
                   "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"]},
        "inputs": [["sample", "torch.randn(2, 4, 32, 32)"], ["timestep", "torch.tensor([1, 10])"],
                   ["encoder_hidden_states", "torch.randn(2, 8, 32)"],
                   ["controlnet_cond", "torch.randn(2, 3, 64, 64)"]],
        "call": [["sample", "sample"], ["timestep", "timestep"], ["encoder_hidden_states", "encoder_hidden_states"],
                 ["controlnet_cond", "controlnet_cond"]]},
    "SD3Transformer2DModel": {
        "kwargs": {"sample_size": 32, "patch_size": 2, "in_channels": 4, "num_layers": 2, "attention_head_dim": 16,
                   "num_attention_heads": 2, "joint_attention_dim": 32, "caption_projection_dim": 32,
                   "pooled_projection_dim": 32, "out_channels": 4, "pos_embed_max_size": 32},
        "inputs": [["hidden_states", "torch.randn(2, 4, 32, 32)"], ["encoder_hidden_states", "torch.randn(2, 8, 32)"],
                   ["pooled_projections", "torch.randn(2, 32)"], ["timestep", "torch.tensor([1, 10])"]],
        "call": [["hidden_states", "hidden_states"], ["encoder_hidden_states", "encoder_hidden_states"],
                 ["pooled_projections", "pooled_projections"], ["timestep", "timestep"]]},
    "FluxTransformer2DModel": {
        "kwargs": {"patch_size": 1, "in_channels": 4, "num_layers": 1, "num_single_layers": 1,
                   "attention_head_dim": 16, "num_attention_heads": 2, "joint_attention_dim": 32,
                   "pooled_projection_dim": 32, "axes_dims_rope": [4, 4, 8]},
        "inputs": [["hidden_states", "torch.randn(2, 16, 4)"], ["encoder_hidden_states", "torch.randn(2, 8, 32)"],
                   ["pooled_projections", "torch.randn(2, 32)"], ["timestep", "torch.tensor([1.0, 1.0])"],
                   ["img_ids", "torch.zeros(16, 3)"], ["txt_ids", "torch.zeros(8, 3)"]],
        "call": [["hidden_states", "hidden_states"], ["encoder_hidden_states", "encoder_hidden_states"],
                 ["pooled_projections", "pooled_projections"], ["timestep", "timestep"],
                 ["img_ids", "img_ids"], ["txt_ids", "txt_ids"]]},
    "UNet1DModel": {  # diffusers' own test config (a diffuser-planner style 1D UNet)
        "kwargs": {"block_out_channels": [32, 64, 128, 256], "in_channels": 14, "out_channels": 14,
                   "time_embedding_type": "positional", "use_timestep_embedding": True, "flip_sin_to_cos": False,
                   "freq_shift": 1.0, "out_block_type": "OutConv1DBlock", "mid_block_type": "MidResTemporalBlock1D",
                   "down_block_types": ["DownResnetBlock1D"] * 4, "up_block_types": ["UpResnetBlock1D"] * 3,
                   "act_fn": "swish"},
        "inputs": [["sample", "torch.randn(2, 14, 16)"], ["timestep", "torch.tensor([10, 10])"]],
        "call": [["sample", "sample"], ["timestep", "timestep"]]},
    "SanaTransformer2DModel": {
        "kwargs": {"in_channels": 4, "out_channels": 4, "num_attention_heads": 2, "attention_head_dim": 16,
                   "num_layers": 2, "num_cross_attention_heads": 2, "cross_attention_head_dim": 16,
                   "cross_attention_dim": 32, "caption_channels": 32, "sample_size": 16, "patch_size": 1},
        "inputs": [["hidden_states", "torch.randn(2, 4, 16, 16)"], ["encoder_hidden_states", "torch.randn(2, 8, 32)"],
                   ["timestep", "torch.tensor([1, 10])"]],
        "call": [["hidden_states", "hidden_states"], ["encoder_hidden_states", "encoder_hidden_states"],
                 ["timestep", "timestep"]]},
    "PriorTransformer": {
        "kwargs": {"num_attention_heads": 2, "attention_head_dim": 16, "embedding_dim": 32, "num_layers": 2,
                   "num_embeddings": 8, "additional_embeddings": 4},
        "inputs": [["hidden_states", "torch.randn(2, 32)"], ["timestep", "torch.tensor([1, 10])"],
                   ["proj_embedding", "torch.randn(2, 32)"], ["encoder_hidden_states", "torch.randn(2, 8, 32)"]],
        "call": [["hidden_states", "hidden_states"], ["timestep", "timestep"], ["proj_embedding", "proj_embedding"],
                 ["encoder_hidden_states", "encoder_hidden_states"]]},
}


# -- parameter variants -----------------------------------------------------------------
def _forward_params(cls) -> set:
    try:
        return set(inspect.signature(cls.forward).parameters)
    except (TypeError, ValueError):
        return set()


def _transformers_variants(cand: dict):
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    cls = getattr(transformers, cand["name"])
    config_cls = CONFIG_MAPPING[cand["model_type"]]
    default = config_cls()
    fwd = _forward_params(cls)
    main = getattr(cls, "main_input_name", "input_ids")
    for scale in (1, 2):
        overrides = shrink(default, scale)
        cfg = config_cls(**overrides)
        for inputs, call in _transformers_inputs(main, cfg, fwd):
            params = {"lib": "transformers", "name": cand["name"],
                      "build": {"kind": "transformers", "config_class": config_cls.__name__,
                                "config": overrides, "model_class": cand["name"]},
                      "inputs": inputs, "call": call}
            yield params, _labels(cand.get("labels"), fwd, cfg)


def _transformers_inputs(main: str, cfg, fwd: set):
    if main == "input_ids":
        ids = [["input_ids", f"torch.randint(0, {TOKEN_HI}, ({BATCH}, {SEQ}))"]]
        call = [["input_ids", "input_ids"]]
        if "attention_mask" in fwd:
            ids.append(["attention_mask", f"torch.ones({BATCH}, {SEQ}, dtype=torch.long)"])
            call.append(["attention_mask", "attention_mask"])
        yield ids, call
        if "pixel_values" in fwd:  # image-text models that need both (CLIP, BLIP, ...)
            vision = getattr(cfg, "vision_config", None) or cfg
            size = getattr(vision, "image_size", 32)
            size = size if isinstance(size, int) else 32
            channels = getattr(vision, "num_channels", 3) or 3
            yield (ids + [["pixel_values", f"torch.randn({BATCH}, {channels}, {size}, {size})"]],
                   call + [["pixel_values", "pixel_values"]])
        if "decoder_input_ids" in fwd:
            yield (ids + [["decoder_input_ids", f"torch.randint(0, {TOKEN_HI}, ({BATCH}, 8))"]],
                   call + [["decoder_input_ids", "decoder_input_ids"]])
    elif main == "pixel_values":
        size = getattr(cfg, "image_size", 32)
        size = size if isinstance(size, int) else (size[0] if isinstance(size, (list, tuple)) else 32)
        channels = getattr(cfg, "num_channels", 3) or 3
        for s in dict.fromkeys([size, 32, 64, 224]):
            yield [["pixel_values", f"torch.randn({BATCH}, {channels}, {s}, {s})"]], [["pixel_values", "pixel_values"]]
    elif main == "input_values":
        for n in (4000, 16000):
            yield [["input_values", f"torch.randn({BATCH}, {n})"]], [["input_values", "input_values"]]
    elif main == "input_features":
        mels = getattr(cfg, "num_mel_bins", None) or getattr(cfg, "feature_size", None) or 80
        src = getattr(cfg, "max_source_positions", 32) or 32
        shapes = [(mels, 2 * src)]
        per_channel = getattr(cfg, "input_feat_per_channel", None)
        if per_channel:
            shapes.insert(0, (32, per_channel * getattr(cfg, "input_channels", 1)))
        shapes.append((32, mels))
        for a, b in shapes:
            extra = ([["decoder_input_ids", f"torch.randint(0, {TOKEN_HI}, ({BATCH}, 8))"]]
                     if "decoder_input_ids" in fwd else [])
            yield ([["input_features", f"torch.randn({BATCH}, {a}, {b})"]] + extra,
                   [["input_features", "input_features"]] + [[e[0], e[0]] for e in extra])
    else:
        raise Unsupported(f"main input {main!r} not generated")


def _labels(kind, fwd: set, cfg):
    if kind is None or "labels" not in fwd:
        return None
    if kind == "ids":
        return [["labels", "input_ids.clone()"]]
    if kind == "class":
        return [["labels", f"torch.randint(0, {max(2, getattr(cfg, 'num_labels', 2))}, ({BATCH},))"]]
    if kind == "token":
        return [["labels", f"torch.randint(0, {max(2, getattr(cfg, 'num_labels', 2))}, ({BATCH}, {SEQ}))"]]
    return None


def _timm_variants(cand: dict):
    import timm

    name = cand["name"]
    cfg = timm.models.get_pretrained_cfg(name)
    default = getattr(cfg, "input_size", (3, 224, 224)) if cfg is not None else (3, 224, 224)
    chans = default[0]
    tries = [({}, 64), ({"img_size": 64}, 64), ({}, default[1])]
    for kwargs, size in tries:
        params = {"lib": "timm", "name": name,
                  "build": {"kind": "timm", "model_name": name, "kwargs": {"num_classes": 10, **kwargs}},
                  "inputs": [["x", f"torch.randn({BATCH}, {chans}, {size}, {size})"]], "call": [[None, "x"]]}
        yield params, [["labels", f"torch.randint(0, 10, ({BATCH},))"]]


def _diffusers_variants(cand: dict):
    spec = cand["spec"]
    yield ({"lib": "diffusers", "name": cand["name"],
            "build": {"kind": "diffusers", "model_class": cand["name"], "kwargs": spec["kwargs"]},
            "inputs": spec["inputs"], "call": spec["call"]}, None)


class Unsupported(Exception):
    pass


def _run(text: str) -> dict:
    ns = {"__name__": "__main__"}
    exec(compile(text, "<zoo-probe>", "exec"), ns)
    return ns


def _loss_expr(out, labels) -> str:
    import torch

    if labels and getattr(out, "loss", None) is not None:
        return "out.loss"
    first = out
    expr = "out"
    if not isinstance(out, torch.Tensor):
        for field in ("logits", "last_hidden_state", "sample", "prediction_logits", "pred_masks",
                      "predicted_depth", "extract_features"):
            if isinstance(getattr(out, field, None), torch.Tensor):
                return f"out.{field}.float().pow(2).mean()"
        first, expr = out[0], "out[0]"
        if isinstance(first, (tuple, list)):
            first, expr = first[0], "out[0][0]"
    if not isinstance(first, torch.Tensor):
        raise Unsupported(f"no tensor output ({type(first).__name__})")
    return f"{expr}.float().pow(2).mean()"


def probe(cand: dict) -> dict:
    """{"params": ...} for the first variant that runs in both modes, or {"error": reason}."""
    import torch

    torch.set_num_threads(1)
    variants = {"transformers": _transformers_variants, "timm": _timm_variants,
                "diffusers": _diffusers_variants}[cand["lib"]]
    errors = []
    try:
        for params, labels in variants(cand):
            try:
                ns = _run(render(params, "eval", eager=True))
                count = sum(p.numel() for p in ns["model"].parameters())
                if count > MAX_PARAMS:
                    raise Unsupported(f"too large: {count} parameters")
                out = ns["out"]
                if cand["lib"] == "timm":
                    loss = "torch.nn.functional.cross_entropy(out, labels)" if isinstance(out, torch.Tensor) \
                        else "torch.nn.functional.cross_entropy(out[0], labels)"
                    params["train_inputs"] = labels
                else:
                    if labels:
                        params["train_inputs"] = labels
                        params["train_call"] = [["labels", "labels"]]
                    loss = "out.loss" if labels else _loss_expr(out, False)
                params["loss"] = loss
                try:
                    _run(render(params, "train", eager=True))
                except Exception as err:  # a head whose loss needs other labels: plain outputs
                    if params.get("train_inputs") and cand["lib"] == "transformers":
                        params.pop("train_inputs"), params.pop("train_call", None)
                        params["loss"] = _loss_expr(out, False)
                        _run(render(params, "train", eager=True))
                    else:
                        raise err
                params["parameters"] = count
                return {"params": params, "tried": len(errors) + 1}
            except Unsupported as err:
                errors.append(f"{err}")
                if str(err).startswith("too large"):
                    break
            except Exception as err:  # noqa: BLE001 - a failing variant is data
                errors.append(_short(err))
    except Unsupported as err:
        errors.append(str(err))
    except Exception as err:  # noqa: BLE001 - config class itself fails
        errors.append("config: " + _short(err))
    return {"error": errors[-1] if errors else "no variant", "errors": errors[:4]}


def _short(err: BaseException) -> str:
    tb = traceback.extract_tb(err.__traceback__)
    where = ""
    for fs in reversed(tb):
        if "site-packages" in fs.filename:
            where = f" at {fs.filename.split('site-packages/')[-1]}:{fs.lineno}"
            break
    return f"{type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}{where}"
