"""The labs' machinery: building and running a student's copy (`harness`), what a copy may hold
(`copies`), its confinement (`sandbox`, entered by `enter`, each rank under `reaper`), grading a
class (`grading`), a lab's prediction graded against `pxq advise` (`prediction`), the first one
sealed in the copy (`sealing`), and the teacher's folder (`teach`). The labs themselves are
plugins in pxq.labs."""
