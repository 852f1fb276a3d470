//! The index page `kubesim sweep --html DIR` writes beside the reports of its failing seeds: the table
//! of scenarios (seeds, passed, failed) and, per failing seed, a link to its report with the first
//! failure and the command that replays it. Plain HTML, every name escaped.

use super::html::escape;

/// One scenario's row.
pub struct ScenarioRow {
    pub scenario: String,
    pub file: String,
    pub seeds: usize,
    pub failed: Vec<FailedSeed>,
}

/// A failing seed and its report.
pub struct FailedSeed {
    pub seed: u64,
    /// The report's file name, relative to the index; `None` when it could not be written.
    pub report: Option<String>,
    pub first_failure: String,
    pub replay: String,
}

/// The index page.
pub fn page(rows: &[ScenarioRow]) -> String {
    let total: usize = rows.iter().map(|r| r.seeds).sum();
    let failed: usize = rows.iter().map(|r| r.failed.len()).sum();
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kubesim sweep</title>\n<style>\n\
         body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #1d2330; }\n\
         table { border-collapse: collapse; } td, th { padding: 2px 10px; border-bottom: 1px solid #e3e6eb; text-align: left; }\n\
         .fail { color: #c62828; } .pass { color: #1a7f37; } code { font-size: 12px; }\n</style>\n</head>\n<body>\n",
    );
    s.push_str(&format!(
        "<h1>kubesim sweep</h1>\n<p class=\"{}\">{total} seeds, {} passed, {failed} failed</p>\n",
        if failed == 0 { "pass" } else { "fail" },
        total - failed
    ));
    s.push_str("<table id=\"scenarios\">\n<tr><th>scenario</th><th>file</th><th>seeds</th><th>passed</th><th>failed</th></tr>\n");
    for r in rows {
        s.push_str(&format!(
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\n",
            escape(&r.scenario),
            escape(&r.file),
            r.seeds,
            r.seeds - r.failed.len(),
            if r.failed.is_empty() { "pass" } else { "fail" },
            r.failed.len()
        ));
    }
    s.push_str("</table>\n");
    if failed > 0 {
        s.push_str("<h2>Failing seeds</h2>\n<ul id=\"failures\">\n");
        for r in rows {
            for f in &r.failed {
                let link = match &f.report {
                    Some(file) => format!("<a href=\"{}\">{} seed {}</a>", escape(file), escape(&r.scenario), f.seed),
                    None => format!("{} seed {} (no report)", escape(&r.scenario), f.seed),
                };
                s.push_str(&format!(
                    "<li>{link}: {}<br><code>{}</code></li>\n",
                    escape(&f.first_failure),
                    escape(&f.replay)
                ));
            }
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// A file name for a scenario's seed report: the name's letters, digits, `-` and `_`, then the seed.
pub fn report_file_name(scenario: &str, seed: u64) -> String {
    let safe: String =
        scenario.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("{safe}-seed-{seed}.html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_links_every_failing_seed_and_escapes_names() {
        let rows = vec![ScenarioRow {
            scenario: "a<b>".into(),
            file: "x/a<b>.toml".into(),
            seeds: 3,
            failed: vec![FailedSeed {
                seed: 2,
                report: Some(report_file_name("a<b>", 2)),
                first_failure: "Reliable must hold: <gap>".into(),
                replay: "cargo kubesim run x --seed 2".into(),
            }],
        }];
        let p = page(&rows);
        assert!(p.contains("<a href=\"a_b_-seed-2.html\">a&lt;b&gt; seed 2</a>"), "{p}");
        assert!(p.contains("3 seeds, 2 passed, 1 failed"));
        assert!(!p.contains("<gap>"));
    }
}
