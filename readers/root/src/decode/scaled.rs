//! Ranged `Double32_t` values, `int / factor + min` with ROOT's bits, without a division per
//! value. A division is several times the cost of a multiplication; the quotient here is found
//! from the reciprocal and corrected twice with fused multiply-adds, which gives the division's
//! correctly rounded result (see [`fma`]). One of the decoders' three unsafe modules (with
//! `jump` and `nested`): only to call the kernel compiled for FMA, once the machine has said it
//! has it.
#![allow(unsafe_code)]

/// `int / factor + min` for each big-endian 4-byte `int` of `src`, appended to `out`, bit for bit
/// as ROOT computes it.
pub(super) fn scaled_into(src: &[[u8; 4]], min: f64, factor: f64, out: &mut Vec<f64>) {
    #[cfg(target_arch = "x86_64")]
    if within_reach(factor)
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("avx2")
    {
        // SAFETY: the machine has FMA and AVX2, the only requirement of the kernel.
        unsafe { fma::scaled_into(src, min, factor, out) };
        return;
    }
    out.extend(
        src.iter()
            .map(|c| f64::from(u32::from_be_bytes(*c)) / factor + min),
    );
}

/// Whether `factor` is far enough from overflow and underflow, and so is its reciprocal and
/// every quotient of a 32-bit integer by it, for the corrections to be exact (the proof's
/// condition); a range of ROOT's always is, unless absurdly narrow or wide.
fn within_reach(factor: f64) -> bool {
    (2f64.powi(-500)..=2f64.powi(500)).contains(&factor)
}

#[cfg(target_arch = "x86_64")]
mod fma {
    /// [`super::scaled_into`] when the machine has FMA.
    ///
    /// With `y` = 1/factor correctly rounded and `q` = x·y rounded, `q` is within two units in
    /// the last place of x/factor. One correction, `q + (x - q·factor)·y`, brings it within one
    /// (its error is the first's times `y`'s, 2^-52 at most, plus a rounding). From there,
    /// `x - q·factor` is exact in one fused multiply-add, and Markstein's theorem (with `y`
    /// within half a unit of 1/factor and `q` within one of the quotient, `q + r·y` rounded once
    /// is the correctly rounded quotient) makes the second correction the division's own
    /// result. The test checks it against the division on millions of values.
    ///
    /// # Safety
    /// The machine must have FMA and AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn scaled_into(src: &[[u8; 4]], min: f64, factor: f64, out: &mut Vec<f64>) {
        let y = 1.0 / factor;
        out.extend(src.iter().map(|c| {
            let x = f64::from(u32::from_be_bytes(*c));
            let q = x * y;
            let q = (-q).mul_add(factor, x).mul_add(y, q);
            (-q).mul_add(factor, x).mul_add(y, q) + min
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What ROOT computes.
    fn divided(ints: &[u32], min: f64, factor: f64) -> Vec<u64> {
        ints.iter()
            .map(|&i| (f64::from(i) / factor + min).to_bits())
            .collect()
    }

    /// The answers of [`scaled_into`], and where the machine has FMA those of the kernel itself
    /// (so that a dispatch that stopped taking it would not leave it untested).
    fn scaled(ints: &[u32], min: f64, factor: f64) -> Vec<u64> {
        let src: Vec<[u8; 4]> = ints.iter().map(|i| i.to_be_bytes()).collect();
        let mut out = Vec::new();
        scaled_into(&src, min, factor, &mut out);
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx2") {
            let mut kernel = Vec::new();
            // SAFETY: the machine has FMA and AVX2.
            unsafe { fma::scaled_into(&src, min, factor, &mut kernel) };
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            if within_reach(factor) {
                assert_eq!(bits(&kernel), bits(&out), "factor {factor:e}");
            }
        }
        out.iter().map(|v| v.to_bits()).collect()
    }

    /// Factors as ROOT makes them from `[min, max, bits]` titles, and ones whose mantissas are
    /// all ones, all zeros, or random; integers at the ends of the range, around powers of two
    /// and random: every result equals the division's, bit for bit.
    #[test]
    fn equals_the_division_bit_for_bit() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut factors = Vec::new();
        for bits in [2u32, 8, 12, 16, 20, 24, 31, 32] {
            let big = if bits < 32 {
                f64::from(1u32 << bits)
            } else {
                f64::from(u32::MAX)
            };
            for (lo, hi) in [
                (-30.0, 30.0),
                (0.0, 100.0),
                (0.0, 2.0 * std::f64::consts::PI),
            ] {
                factors.push(big / (hi - lo));
            }
        }
        for e in [-40, -1, 0, 1, 7, 52, 200] {
            // Mantissa all ones, the reciprocal's hardest case, and a bare power of two.
            factors.push(f64::from_bits(
                (((1023 + e) as u64) << 52) | ((1u64 << 52) - 1),
            ));
            factors.push(2f64.powi(e));
        }
        for _ in 0..40 {
            let exponent = 1023 - 60 + next() % 120;
            factors.push(f64::from_bits(exponent << 52 | next() >> 12));
        }
        let mut ints: Vec<u32> = (0..4096).chain(u32::MAX - 4096..=u32::MAX).collect();
        for k in 1..32 {
            ints.extend((1u32 << k).saturating_sub(3)..=(1u32 << k).saturating_add(3));
        }
        ints.extend((0..40_000).map(|_| next() as u32));
        let mut checked = 0;
        for &factor in &factors {
            for min in [0.0, -30.0, 1e-3] {
                assert_eq!(
                    scaled(&ints, min, factor),
                    divided(&ints, min, factor),
                    "factor {factor:e}, min {min}"
                );
                checked += ints.len();
            }
        }
        assert!(checked > 10_000_000, "{checked}");
    }

    /// Factors out of the corrections' reach take the division, with the same answers.
    #[test]
    fn absurd_factors_take_the_division() {
        let ints = [0, 1, 7, u32::MAX];
        for factor in [1e-300, 1e300, f64::MIN_POSITIVE, f64::INFINITY, f64::NAN] {
            assert!(!within_reach(factor));
            assert_eq!(scaled(&ints, 0.5, factor), divided(&ints, 0.5, factor));
        }
    }
}
