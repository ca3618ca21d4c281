JM
f¿r6M@Æ«P@