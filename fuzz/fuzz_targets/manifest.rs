//! Arbitrary bytes into the strict native manifest parser. It must never
//! panic; whatever it accepts must survive its own canonical document, and
//! whatever it refuses must say why.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reasonix_package::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    match Manifest::from_slice(data) {
        Ok(manifest) => {
            let again = Manifest::from_value(&manifest.to_document())
                .expect("a manifest's canonical document parses");
            assert_eq!(again, manifest);
        }
        Err(err) => assert!(!err.issues.is_empty()),
    }
});
