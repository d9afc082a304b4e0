-- Reserved for a migration being written; empty until then.
SELECT 1;
