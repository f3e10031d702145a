//! Re-balancing the parts of a frame by their measured times: the parts' shares of the frame's
//! triangles follow what each part's triangles cost in the frames before, so that a frame whose
//! cost is not spread evenly over its triangles (near walls covering the screen, far detail
//! covering little) is still divided evenly, and a view that changes much is followed within a
//! few frames.

/// The shares of a frame's drawn triangles its parts take ([`super::partition::split_shares`]),
/// carried from frame to frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Balance {
    shares: Vec<f64>,
}

/// The least share a part keeps, as a fraction of an even share: a part whose triangles were
/// slow is given fewer, never none, so that its cost keeps being measured.
const FLOOR: f64 = 0.05;

/// Parts whose times lie within this fraction of each other are balanced: their shares stay,
/// so that a view that does not change keeps its cuts frame after frame (and what a backend
/// made at them, such as an object's windows of batches, is made again the same), and one
/// frame's noise moves nothing.
pub const SETTLED: f64 = 0.03;

impl Balance {
    /// Even shares for `parts` parts (at least one).
    pub fn new(parts: usize) -> Balance {
        let parts = parts.max(1);
        Balance {
            shares: vec![1.0 / parts as f64; parts],
        }
    }

    /// The parts' shares, summing to one.
    pub fn shares(&self) -> &[f64] {
        &self.shares
    }

    /// Takes the parts' times of a frame drawn with these shares: each part's triangles are
    /// taken to cost what they cost then (its time over its share), and the shares move halfway
    /// to those that would have made every part take the same time (halfway, so that one
    /// frame's noisy times do not swing them). Times within [`SETTLED`] of each other, and
    /// times that are not finite and positive (a part that drew nothing, or was not timed),
    /// leave the shares as they are.
    pub fn update(&mut self, part_ms: &[f64]) {
        if part_ms.len() != self.shares.len()
            || part_ms.iter().any(|&t| !(t.is_finite() && t > 0.0))
        {
            return;
        }
        let (least, most) = part_ms
            .iter()
            .fold((f64::INFINITY, 0f64), |(a, b), &t| (a.min(t), b.max(t)));
        if most <= least * (1.0 + SETTLED) {
            return;
        }
        let n = self.shares.len() as f64;
        // triangles a millisecond, per part; the new shares are proportional to them
        let rate: Vec<f64> = self
            .shares
            .iter()
            .zip(part_ms)
            .map(|(s, t)| s / t)
            .collect();
        let sum: f64 = rate.iter().sum();
        if !(sum.is_finite() && sum > 0.0) {
            return;
        }
        let floor = FLOOR / n;
        let mut shares: Vec<f64> = rate
            .iter()
            .zip(&self.shares)
            .map(|(r, old)| (0.5 * (r / sum + old)).max(floor))
            .collect();
        let total: f64 = shares.iter().sum();
        for s in &mut shares {
            *s /= total;
        }
        self.shares = shares;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_the_measured_times() {
        let mut b = Balance::new(2);
        assert_eq!(b.shares(), [0.5, 0.5]);
        // part 0 took twice as long for the same triangles: its share moves halfway to a
        // third, and as frames with those costs come, to a third
        b.update(&[2.0, 1.0]);
        let s = b.shares();
        assert!((s[0] - (0.5 + 1.0 / 3.0) / 2.0).abs() < 1e-12, "{s:?}");
        for _ in 0..40 {
            let s = b.shares().to_vec();
            // (each part's triangles cost as before: part 0's twice part 1's)
            b.update(&[2.0 * s[0], s[1]]);
        }
        // (to within the settled band: then they stay)
        let s = b.shares().to_vec();
        assert!((s[0] - 1.0 / 3.0).abs() < 0.01, "{s:?}");
        let times = [2.0 * s[0], s[1]];
        assert!(times[0].max(times[1]) <= times[0].min(times[1]) * (1.0 + SETTLED));
        b.update(&times);
        assert_eq!(b.shares(), s);
        // times a little apart, within the band, move nothing; further apart, they do
        b.update(&[1.0, 1.0 + SETTLED / 2.0]);
        assert_eq!(b.shares(), s);
        b.update(&[1.0, 1.0 + 2.0 * SETTLED]);
        assert!(b.shares()[0] > s[0]);
        // a part that drew nothing, or the wrong count, changes nothing
        let before = b.clone();
        b.update(&[0.0, 1.0]);
        b.update(&[1.0]);
        b.update(&[f64::NAN, 1.0]);
        assert_eq!(b, before);
        // a part far slower keeps at least its floor
        let mut b = Balance::new(4);
        for _ in 0..40 {
            b.update(&[1e9, 1.0, 1.0, 1.0]);
        }
        let s = b.shares();
        // (the floor, less what renormalising takes back)
        assert!(s[0] >= FLOOR / 4.0 * 0.9, "{s:?}");
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(Balance::new(0).shares(), [1.0]);
    }
}
