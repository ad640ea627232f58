use super::*;

#[test]
fn the_probe_asks_for_what_the_workers_pool_holds() {
    for (bytes, iters) in [(32, 20_000), (65_536, 300), (1 << 20, 20), (1 << 24, 20)] {
        let calls = probe_calls(bytes, iters, 0.0);
        assert_eq!(
            crate::companion::proof::pool_messages(bytes, calls),
            calls,
            "{bytes} B × {iters}"
        );
    }
    assert_eq!(probe_calls(32, 20_000, 0.0), 4000);
    assert_eq!(probe_calls(1 << 20, 20, 0.0), 1);
    // 20 ms at 3 µs a call; at 300 ns the pool holds fewer.
    assert_eq!(probe_calls(32, 2_000, 3_000.0), 6_667);
    assert_eq!(probe_calls(32, 2_000, 300.0), 32_768);
    assert_eq!(PROBE_POOL_BYTES, crate::companion::proof::POOL_BYTES);
}
