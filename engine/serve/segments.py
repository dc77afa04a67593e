"""Codes for the step tags, shared by the engine loop and the raw log.

The article's codes (the `segs` and `steps` arrays) are kept exactly; the finer
`detail` code of each segment is an extra array for schemes that want to tell a
KV-slot reservation from a real swap-in.
"""
TOK, SWAP, PREFILL, DECODE = 0, 1, 2, 3            # article segment codes
SEG_NAMES = {TOK: "tok", SWAP: "swap", PREFILL: "prefill", DECODE: "decode"}

# finer kinds (extra array `seg_detail`): what the engine was actually doing
# D_REPREFILL: a recompute victim's KV rebuilt by prefill (Config.preempt_mode "recompute"),
# a PREFILL segment of its own, apart from first-time prefill
D_TOK, D_SWAP_IN, D_RESERVE, D_PREFILL, D_DECODE, D_REPREFILL = 0, 1, 2, 3, 4, 5
DETAIL_NAMES = {D_TOK: "tok", D_SWAP_IN: "swap_in", D_RESERVE: "kv_reserve",
                D_PREFILL: "prefill", D_DECODE: "decode", D_REPREFILL: "reprefill"}

NO_DECODE, EAGER = -1, 0                           # graph codes; else the padded batch size
