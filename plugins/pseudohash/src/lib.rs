#[unsafe(no_mangle)]
pub extern "C" fn CryptHash(_d: i32, _m: *const u8, _l: u64, _o: *mut u8) -> i32 {
    -4
}
