//! `--token-auth-file`: static bearer tokens, one CSV record per token (`token,user,uid[,"group1,group2"]`),
//! read as kube's `tokenfile.NewCSV` reads them: at least three columns, an empty token skipped, a repeated
//! token won by its last record.

use std::collections::BTreeMap;

use crate::registry::user::UserInfo;

/// The tokens of a token file, each to its user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenFile {
    users: BTreeMap<String, UserInfo>,
}

impl TokenFile {
    /// Parses the file's `text`; `path` is for the error (upstream's text names it).
    pub fn parse(path: &str, text: &str) -> Result<TokenFile, String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::None)
            .from_reader(text.as_bytes());
        let mut users = BTreeMap::new();
        for record in reader.records() {
            let record = record.map_err(|e| format!("token file '{path}': {e}"))?;
            if record.len() < 3 {
                return Err(format!(
                    "token file '{path}' must have at least 3 columns (token, user name, user uid), found {}",
                    record.len()
                ));
            }
            if record[0].is_empty() {
                continue;
            }
            let groups = match record.get(3) {
                Some(groups) => groups.split(',').map(str::to_string).collect(),
                None => Vec::new(),
            };
            let user = UserInfo { username: record[1].into(), uid: record[2].into(), groups, extra: BTreeMap::new() };
            users.insert(record[0].to_string(), user);
        }
        Ok(TokenFile { users })
    }

    /// No tokens at all.
    pub fn empty() -> &'static TokenFile {
        static EMPTY: std::sync::LazyLock<TokenFile> = std::sync::LazyLock::new(TokenFile::default);
        &EMPTY
    }

    /// One token for one user: the admin identity the binary writes into its kubeconfig.
    pub fn single(token: &str, user: UserInfo) -> TokenFile {
        TokenFile { users: BTreeMap::from([(token.to_string(), user)]) }
    }

    /// Adds the tokens of `other`; its records win.
    pub fn extend(&mut self, other: TokenFile) {
        self.users.extend(other.users);
    }

    /// The user of `token`, if the file has it.
    pub fn user(&self, token: &str) -> Option<&UserInfo> {
        self.users.get(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_as_tokenfile_reads_them() {
        let file = TokenFile::parse(
            "t.csv",
            "admin-token,admin,1,\"system:masters,dev\"\n\nbob-token,bob,2\n,nobody,3\nbob-token,robert,4\n",
        )
        .unwrap();
        let admin = file.user("admin-token").unwrap();
        assert_eq!((admin.username.as_str(), admin.uid.as_str()), ("admin", "1"));
        assert_eq!(admin.groups, vec!["system:masters", "dev"]);
        assert_eq!(file.user("bob-token").unwrap().username, "robert", "the last record wins");
        assert!(file.user("").is_none(), "an empty token is skipped");
        assert!(file.user("nope").is_none());
    }

    #[test]
    fn short_records_are_refused_with_upstreams_text() {
        assert_eq!(
            TokenFile::parse("/etc/t.csv", "tok,user\n").unwrap_err(),
            "token file '/etc/t.csv' must have at least 3 columns (token, user name, user uid), found 2"
        );
    }
}
