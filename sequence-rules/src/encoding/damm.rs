//! The Damm algorithm (H. Michael Damm, 2004): each digit moves an interim digit through a
//! totally anti-symmetric quasigroup of order 10; the check digit is the last interim digit,
//! and a number followed by its check digit ends at 0.

/// The quasigroup: the interim digit after `d` is `TABLE[interim][d]`, starting from 0. The
/// table of Damm's thesis, as printed on Wikipedia's "Damm algorithm" page.
const TABLE: [[u8; 10]; 10] = [
    [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
    [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
    [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
    [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
    [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
    [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
    [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
    [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
    [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
    [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
];

/// The interim digit after every digit of `digits` (digit values, 0 to 9): the check digit of
/// a number, 0 for a number followed by its check digit.
pub(super) fn interim(digits: &[u8]) -> u8 {
    digits
        .iter()
        .fold(0, |interim, &d| TABLE[usize::from(interim)][usize::from(d)])
}

#[cfg(test)]
mod tests {
    use super::TABLE;
    use crate::encoding::CheckDigit;

    #[test]
    fn the_table_is_a_totally_anti_symmetric_quasigroup_with_a_zero_diagonal() {
        for i in 0..10 {
            let mut row: Vec<u8> = TABLE[i].to_vec();
            let mut column: Vec<u8> = TABLE.iter().map(|r| r[i]).collect();
            row.sort_unstable();
            column.sort_unstable();
            assert_eq!(
                row,
                (0..10).collect::<Vec<u8>>(),
                "row {i} is a permutation"
            );
            assert_eq!(column, row, "column {i} is a permutation");
            assert_eq!(TABLE[i][i], 0);
        }
        // (c * x) * y = (c * y) * x only when x = y: what catches every adjacent transposition.
        for c in 0..10 {
            for x in 0..10 {
                for y in 0..10 {
                    let xy = TABLE[usize::from(TABLE[c][x])][y];
                    let yx = TABLE[usize::from(TABLE[c][y])][x];
                    assert!(xy != yx || x == y, "c={c} x={x} y={y}");
                }
            }
        }
    }

    #[test]
    fn damm_matches_the_published_example() {
        // Wikipedia, "Damm algorithm": the worked example 572 has the check digit 4.
        assert_eq!(CheckDigit::Damm.compute("572").unwrap(), "4");
        assert_eq!(CheckDigit::Damm.verify("5724"), Ok(()));
        assert_eq!(
            CheckDigit::Damm.verify("5723").unwrap_err().to_string(),
            "check digit `3` does not match, expected `4` (damm)"
        );
    }
}
