"""Tables and exports of records: `report` (the runs' table and chart labels), `tables` (probes',
profiles' and studies' tables), `caliper` (Caliper profiles), `extrap` and `extrapfit` (Extra-P's
input and models), `trace` and `otf2trace` (timelines), `efficiency` (POP factors), `peers` (NAS
and OSU output as pxq records)."""
