//! The order servers take their slices in, block by block: a Williams design. Over one cycle
//! of blocks ([`cycle`]: `n` blocks for an even count of servers, `2n` for an odd one) every
//! server takes every position equally often and follows every other server equally often,
//! so a drift of the machine within a block, and what one slice leaves behind for the next,
//! fall on every server alike. A rotation by one a block balances the positions only: with
//! three servers, each follows the same one in two hand-overs of three. Whether a place in
//! the block moved a pair's figure anyway is
//! [`crate::mann_whitney::position_effect`], read from each load's recorded place.

/// Blocks in one cycle of the design for `n` servers.
pub fn cycle(n: usize) -> usize {
    if n.is_multiple_of(2) {
        n
    } else {
        2 * n
    }
}

/// The order of `n` servers (by index) in block `block`: row `block` of the Williams design
/// for `n`, cycling. Block 0 takes them in their listed order.
pub fn williams(n: usize, block: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // The first row: 0, 1, n-1, 2, n-2, …; row i adds i to each, mod n; an odd n takes the
    // rows reversed as well. The servers are then renamed so that the first row is 0, 1, 2,
    // …: a renaming keeps every place and every hand-over as balanced as it was.
    let first: Vec<usize> = (0..n)
        .map(|j| match j {
            0 => 0,
            j if !j.is_multiple_of(2) => j.div_ceil(2),
            j => n - j / 2,
        })
        .collect();
    let mut rename = vec![0; n];
    for (j, &s) in first.iter().enumerate() {
        rename[s] = j;
    }
    let row = block % cycle(n);
    let mut order: Vec<usize> = first.iter().map(|s| rename[(s + row % n) % n]).collect();
    if row >= n {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_server_takes_every_place_and_follows_every_other_alike() {
        for n in 1..=9 {
            let rows: Vec<Vec<usize>> = (0..cycle(n)).map(|b| williams(n, b)).collect();
            let times = cycle(n) / n;
            for row in &rows {
                let mut sorted = row.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}: {row:?}");
            }
            for position in 0..n {
                for s in 0..n {
                    let here = rows.iter().filter(|r| r[position] == s).count();
                    assert_eq!(here, times, "n = {n}: server {s} at {position}");
                }
            }
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    let follows = (rows.iter())
                        .filter(|r| r.windows(2).any(|w| w == [a, b]))
                        .count();
                    assert_eq!(follows, times, "n = {n}: {b} after {a}");
                }
            }
        }
        assert_eq!(williams(4, 0), [0, 1, 2, 3]);
        assert_eq!(williams(5, 0), [0, 1, 2, 3, 4]);
        assert_eq!(
            williams(3, 4),
            williams(3, 1).into_iter().rev().collect::<Vec<_>>()
        );
        assert_eq!(williams(3, 6), williams(3, 0));
    }
}
