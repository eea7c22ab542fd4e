//! Arbitrary bytes through the frame decoder and, for requests and
//! notifications of a known method, the strict params decoder (plus, for the
//! raw line, one method's params decoder and one point's replacement
//! validation, chosen by the first byte). Nothing may
//! panic; every rejection must encode to an answer; every accepted frame
//! must re-encode to a line the decoder accepts again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reasonix_protocol::{
    Frame, HookPoint, Method, Outcome, decode_frame, encode_frame, encode_response, trim_line,
    validate_replacement,
};
use serde_json::value::RawValue;

fuzz_target!(|data: &[u8]| {
    let Some(line) = trim_line(data) else {
        return;
    };
    // The same bytes straight into one method's params decoder too, so the
    // strict decoders see inputs the envelope rules would have filtered out.
    let method = Method::ALL[usize::from(data[0]) % Method::ALL.len()];
    if let Ok(raw) = std::str::from_utf8(line)
        .ok()
        .map(|text| serde_json::from_str::<&RawValue>(text))
        .transpose()
    {
        let _ = method.decode_params(raw);
        // And into one point's payload DTO with the replace rules.
        if let Some(raw) = raw {
            let point = HookPoint::ALL[usize::from(data[0]) % HookPoint::ALL.len()];
            let _ = validate_replacement(point, raw);
        }
    }
    match decode_frame(line) {
        Err(rejection) => {
            encode_response(&rejection.response()).expect("a rejection always encodes");
        }
        Ok(frame) => {
            match &frame {
                Frame::Request(request) => decode_params(&request.method, &request.params),
                Frame::Notification(note) => decode_params(&note.method, &note.params),
                Frame::Response(response) => {
                    if let Outcome::Error(error) = &response.outcome {
                        let _ = error.structured_reason();
                    }
                }
            }
            if let Ok(encoded) = encode_frame(&frame) {
                decode_frame(&encoded).expect("a re-encoded frame decodes again");
            }
        }
    }
});

fn decode_params(method: &str, params: &RawValue) {
    if let Some(method) = Method::from_name(method) {
        let _ = method.decode_params(Some(params));
    }
}
