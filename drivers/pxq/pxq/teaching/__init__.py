"""The labs' machinery: building and running a student's copy (harness), confined (sandbox), and
grading a class (grading). The labs themselves are plugins in pxq.labs."""
