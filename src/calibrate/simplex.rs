//! Nelder-Mead minimisation, for the calibration fits: deterministic (the objective is
//! run with fixed seeds), derivative-free (the objective is a simulation).

/// The point of least `eval` found from `x0` in `iterations` steps, with its value.
/// The start simplex moves each coordinate by a fifth of itself (0.01 from zero);
/// `progress` sees each step and the best value so far.
pub fn minimise_with<E>(
    x0: &[f64],
    iterations: u32,
    eval: impl Fn(&[f64]) -> Result<f64, E>,
    mut progress: impl FnMut(u32, f64),
) -> Result<(Vec<f64>, f64), E> {
    let n = x0.len();
    let mut simplex: Vec<Vec<f64>> = vec![x0.to_vec()];
    for i in 0..n {
        let mut x = x0.to_vec();
        x[i] += if x[i] == 0.0 { 0.01 } else { 0.2 * x[i] };
        simplex.push(x);
    }
    let mut values = simplex
        .iter()
        .map(|x| eval(x))
        .collect::<Result<Vec<f64>, _>>()?;
    for it in 0..iterations {
        let mut order: Vec<usize> = (0..=n).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        simplex = order.iter().map(|&i| simplex[i].clone()).collect();
        values = order.iter().map(|&i| values[i]).collect();
        progress(it, values[0]);
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|x| x[j]).sum::<f64>() / n as f64)
            .collect();
        let towards = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&simplex[n])
                .map(|(c, w)| c + t * (w - c))
                .collect()
        };
        let xr = towards(-1.0);
        let fr = eval(&xr)?;
        if fr < values[0] {
            let xe = towards(-2.0);
            let fe = eval(&xe)?;
            (simplex[n], values[n]) = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < values[n - 1] {
            (simplex[n], values[n]) = (xr, fr);
        } else {
            let xc = towards(0.5);
            let fc = eval(&xc)?;
            if fc < values[n] {
                (simplex[n], values[n]) = (xc, fc);
            } else {
                for i in 1..=n {
                    simplex[i] = simplex[0]
                        .iter()
                        .zip(&simplex[i])
                        .map(|(b, x)| b + 0.5 * (x - b))
                        .collect();
                    values[i] = eval(&simplex[i])?;
                }
            }
        }
    }
    let best = (0..=n)
        .min_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap_or(0);
    Ok((simplex[best].clone(), values[best]))
}

/// [`minimise_with`] without progress, returning the point.
pub fn minimise<E>(
    x0: &[f64],
    iterations: u32,
    eval: impl Fn(&[f64]) -> Result<f64, E>,
) -> Result<Vec<f64>, E> {
    minimise_with(x0, iterations, eval, |_, _| {}).map(|(x, _)| x)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_minimum_of_a_bowl() {
        let f = |x: &[f64]| Ok::<f64, ()>((x[0] - 3.0).powi(2) + 2.0 * (x[1] + 1.0).powi(2));
        let x = super::minimise(&[1.0, 1.0], 200, f).unwrap();
        assert!(
            (x[0] - 3.0).abs() < 1e-3 && (x[1] + 1.0).abs() < 1e-3,
            "{x:?}"
        );
    }
}
