A=xxxxxxxx
B=$A$A$A$A$A$A$A$A
C=$B$B$B$B$B$B$B$B
D=$C$C$C$C$C$C$C$C
E=$D$D$D$D$D$D$D$D
F=$E$E$E$E$E$E$E$E
G=$F$F$F$F$F$F$F$F
torchrun train.py "${G}$G$G$G$G$G$G$G" `x $(y "z'
