//! Go's `sort.SliceStable`, step for step. kube sorts merged lists with a
//! "less" that is not a strict order (an item it cannot place is "less"
//! than anything), so the result depends on the algorithm: insertion sort
//! over blocks of 20, then in-place `SymMerge` of growing blocks.

/// Sort `data` stably by `less`, exactly as Go's `sort.SliceStable`.
pub(super) fn slice_stable<T>(data: &mut [T], less: &mut impl FnMut(&T, &T) -> bool) {
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, less);
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, less);
    while block < n {
        let (mut a, mut b) = (0, 2 * block);
        while b <= n {
            sym_merge(data, a, a + block, b, less);
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(data, a, m, n, less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(data: &mut [T], a: usize, b: usize, less: &mut impl FnMut(&T, &T) -> bool) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&data[j], &data[j - 1]) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(
    data: &mut [T],
    a: usize,
    m: usize,
    b: usize,
    less: &mut impl FnMut(&T, &T) -> bool,
) {
    if m - a == 1 {
        // Binary search for the first index in [m, b) whose element is not
        // less than data[a], then rotate data[a] into place.
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&data[h], &data[a]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&data[m], &data[h]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&data[p - c], &data[c]) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        rotate(data, start, m, end);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less);
    }
}

/// Go's block-swap rotation of `data[a..b]` around `m`.
fn rotate<T>(data: &mut [T], a: usize, m: usize, b: usize) {
    let mut i = m - a;
    let mut j = b - m;
    while i != j {
        if i > j {
            swap_range(data, m - i, m, j);
            i -= j;
        } else {
            swap_range(data, m - i, m + j - i, i);
            j -= i;
        }
    }
    swap_range(data, m - i, m, i);
}

fn swap_range<T>(data: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        data.swap(a + i, b + i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_with_a_strict_order() {
        let mut v: Vec<(u32, usize)> = (0..97).map(|i| ((i * 37 % 11) as u32, i)).collect();
        let mut want = v.clone();
        want.sort_by_key(|p| p.0);
        slice_stable(&mut v, &mut |x: &(u32, usize), y: &(u32, usize)| x.0 < y.0);
        assert_eq!(v, want);
    }

    #[test]
    fn an_unplaceable_item_drifts_like_in_go() {
        // "x" is not in the order list, so it is "less" than anything:
        // Go's insertion sort moves the later items in front of it.
        let order = ["b", "a"];
        let idx = |s: &&str| order.iter().position(|o| o == s);
        let mut v = vec!["x", "a", "b"];
        slice_stable(&mut v, &mut |l: &&str, r: &&str| match (idx(l), idx(r)) {
            (Some(i), Some(j)) => i < j,
            _ => true,
        });
        assert_eq!(v, ["b", "a", "x"]);
    }
}
