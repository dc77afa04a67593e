"""The two forwards: deterministic, same shapes, and the article forward computes as the
article's engine does under NumPy 2 (float64 hidden states over a float32 KV cache)."""
import numpy as np
import pytest

from engine.serve.model import FORWARDS, make_model
from engine.serve.model_article import ArticleModel


def _decode(forward, batch=5, context=40, seed=0):
    m = make_model(forward, seed)
    kvs = [m.new_kv(context + 2) for _ in range(batch)]
    rng = np.random.default_rng(1)
    for kv in kvs:
        for a in (kv if isinstance(kv, tuple) else (kv,)):
            a[..., :context, :] = rng.standard_normal(a[..., :context, :].shape).astype(np.float32)
    toks = list(range(1, batch + 1))
    return m.decode_batched(toks, kvs, [context] * batch), m.decode_eager(toks, kvs, [context] * batch)


@pytest.mark.parametrize("forward", FORWARDS)
def test_forward_is_deterministic_and_paths_agree(forward):
    a_batched, a_eager = _decode(forward)
    b_batched, b_eager = _decode(forward)
    assert np.array_equal(a_batched, b_batched) and np.array_equal(a_eager, b_eager)
    assert a_batched.shape == a_eager.shape == (5,)
    assert np.array_equal(a_batched, a_eager)       # one batched call or one per row: same tokens


def test_both_forwards_own_their_kv_storage():
    for forward in FORWARDS:
        m = make_model(forward)
        kv = m.new_kv(33)
        assert m.capacity(kv) == 33
        m.prefill_chunk(list(range(20)), kv, 0)
        host = m.take_prefix(kv, 20)                 # an eviction's copy-out
        back = m.new_kv(40)
        m.put_prefix(back, host, 20)                 # a readmission's copy-in
        for a, b in zip(*(x if isinstance(x, tuple) else (x,) for x in (kv, back))):
            assert a.dtype == b.dtype == np.float32
            assert np.abs(a[..., :20, :]).sum() > 0 and not a[..., 20:, :].any()
            assert np.array_equal(a[..., :20, :], b[..., :20, :]) and not b[..., 20:, :].any()


def test_article_kv_is_two_arrays_like_the_articles():
    k, v = ArticleModel.new_kv(16)
    assert k.shape == v.shape == (2, 16, 128) and k.dtype == np.float32 and k.base is None


def test_article_forward_computes_in_float64_over_a_float32_cache():
    m = ArticleModel()
    assert all(w.dtype == np.float64 for w in m.w_qkv + m.w_out + m.w_up + m.w_down)
    assert m.embed.dtype == np.float32 and m.causal.dtype == np.float32
    seen = []
    orig = m._mlp
    m._mlp = lambda layer, x: (seen.append(x.dtype), orig(layer, x))[1]
    kv = m.new_kv(10)
    out = m.decode_batched([3], [kv], [4])
    assert set(seen) == {np.dtype(np.float64)} and kv[0].dtype == kv[1].dtype == np.float32
    assert out.dtype == np.int64 and 0 <= out[0] < 4096


def test_fast_forward_stays_float32():
    m = make_model("fast")
    assert all(w.dtype == np.float32 for w in m.w_qkv + m.w_out + m.w_up + m.w_down + [m.lm_head])


def test_unknown_forward_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown forward 'gpu'; valid forwards: article, fast"):
        make_model("gpu")
    from engine import Config
    with pytest.raises(ValueError, match="forward must be one of article, fast"):
        Config(forward="gpu")
